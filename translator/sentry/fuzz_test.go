package sentry

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
)

// addFixtureSeeds adds the shared fixtures of the given version (JSON files
// and envelope lines) to the corpus. fixtures.Files skips when the shared
// folder is missing, which would also drop the inline seeds, so its presence
// is checked first.
func addFixtureSeeds(f *testing.F, version string) {
	if !sharedFixturesPresent() {
		return
	}
	for _, path := range fixtures.Files(f, ".json", ".envelope") {
		data := fixtures.Read(f, filepath.Base(path))
		candidates := [][]byte{data}
		if filepath.Ext(path) == ".envelope" {
			candidates = bytes.Split(data, []byte("\n"))
		}
		for _, candidate := range candidates {
			var probe struct {
				Version string `json:"version"`
			}
			if len(candidate) < 64<<10 && json.Unmarshal(candidate, &probe) == nil && probe.Version == version {
				f.Add(candidate)
			}
		}
	}
}

// sharedFixturesPresent reports whether ../shared/fixtures/sentry is beside
// the repository root, where internal/fixtures looks.
func sharedFixturesPresent() bool {
	dir, err := os.Getwd()
	if err != nil {
		return false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			_, err := os.Stat(filepath.Join(dir, "..", "shared", "fixtures", "sentry"))
			return err == nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

var inlineSeedsV1 = []string{
	`{"version":"1","event_id":"41fed0925670468bb0457f61a74688ec","platform":"cocoa","timestamp":"2022-09-01T09:45:00.000Z","device":{"architecture":"arm64e","is_emulator":false},"os":{"name":"iOS","version":"16.0"},"transaction":{"id":"30976f2ddbe04ac9b6bffe6e35d4710c","name":"t","trace_id":"4b25bc58f14243d8b208d1e22a054164","active_thread_id":259,"relative_start_ns":"1","relative_end_ns":"2"},"profile":{"samples":[{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"10"},{"stack_id":1,"thread_id":1,"elapsed_since_start_ns":20,"queue_address":"0x1"}],"stacks":[[0],[1,0],[]],"frames":[{"instruction_addr":"0xa722447ffffffffc","sym_addr":"4096","data":{"k":[1]}},{"function":"f","lineno":3}],"thread_metadata":{"1":{"name":"main","priority":31}},"queue_metadata":{"0x1":{"label":"q"}}}}`,
	`{"version":"1","profile_id":"41FED092-5670-468B-B045-7F61A74688EC","transactions":[{"id":"x"}],"measurements":{"cpu":{"unit":"percent","values":[{"elapsed_since_start_ns":"5","value":1.5e2}]}},"profile":{"samples":[{"stack_id":-1}],"stacks":[[9223372036854775807]]}}`,
	`{"version":"1","release":"\ud83d\ude00\u00e9\/\"","profile":null,"device":null}`,
}

var inlineSeedsV2 = []string{
	`{"version":"2","profiler_id":"4d229f1d3807421ba62a5f8bc295d836","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","platform":"python","client_sdk":{"name":"s","version":"1"},"timestamp":1710805688.237,"profile":{"samples":[{"stack_id":0,"thread_id":"1","timestamp":1710805788.500},{"stack_id":1,"thread_id":"1","timestamp":"1.7108057885e9"}],"stacks":[[0],[1,0]],"frames":[{"function":"a","abs_path":"/x.py","in_app":true},{"name":"b","file":"b.py","line":7}],"thread_metadata":{"1":{"name":"MainThread"}}},"measurements":{"m":{"unit":"hz","values":[{"timestamp":1234.123,"value":66}]}},"debug_meta":{"images":[{"type":"elf","image_size":"1720320","image_addr":"0x7f00"}]}}`,
	`{"version":"2","profile":{"samples":[{"timestamp":-0.5,"stack_id":0}],"stacks":[[ 1 , 2 ]]}}`,
	`{"version":"2","platform":"android","content_type":"perfetto"}`,
	`{"version":"2","zz":[[[[{"a":[true,false,null,-1e-9]}]]]]}`,
}

// fuzzDecode is the body of both decode targets: no panic, and whatever
// decodes also validates, normalizes and survives an encode round trip.
func fuzzDecode(t *testing.T, data []byte) {
	p, err := DecodeProfile(data)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error is not *Error: %v", err)
		}
		return
	}
	_ = Validate(p, DefaultLimits())
	Normalize(p)
	_ = Validate(p, DefaultLimits())
	out := AppendChunkJSON(nil, p)
	if !json.Valid(out) {
		t.Fatalf("encoded chunk is not valid JSON: %s", out)
	}
	if _, err := DecodeProfile(out); err != nil {
		t.Fatalf("encoded chunk does not decode: %v\n%s", err, out)
	}
}

func FuzzDecodeProfileV1(f *testing.F) {
	for _, s := range inlineSeedsV1 {
		f.Add([]byte(s))
	}
	addFixtureSeeds(f, VersionV1)
	f.Fuzz(fuzzDecode)
}

func FuzzDecodeProfileV2(f *testing.F) {
	for _, s := range inlineSeedsV2 {
		f.Add([]byte(s))
	}
	addFixtureSeeds(f, VersionV2)
	f.Fuzz(fuzzDecode)
}

// FuzzEncodeRoundTrip: decode, validate, encode, decode must give the same
// profile (as version "2").
func FuzzEncodeRoundTrip(f *testing.F) {
	for _, s := range append(append([]string(nil), inlineSeedsV1...), inlineSeedsV2...) {
		f.Add([]byte(s))
	}
	addFixtureSeeds(f, VersionV1)
	addFixtureSeeds(f, VersionV2)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeProfile(data)
		if err != nil {
			return
		}
		_ = Validate(p, DefaultLimits())
		out := AppendChunkJSON(nil, p)
		back, err := DecodeProfile(out)
		if err != nil {
			t.Fatalf("encoded chunk does not decode: %v\n%s", err, out)
		}
		want := *p
		want.Version = VersionV2
		want.Present = back.Present // the writer writes what has a value
		if !reflect.DeepEqual(&want, back) {
			t.Fatalf("round trip differs: %s\nin:  %s\nout: %s", diffProfiles(back, &want), data, out)
		}
	})
}

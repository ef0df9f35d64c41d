package profilesout

import (
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// FuzzFromProfiles feeds arbitrary OTLP protobuf to the exporter: it must not
// panic, and whatever chunk it produces must pass Relay's rules.
func FuzzFromProfiles(f *testing.F) {
	for _, pd := range fuzzSeeds(f) {
		var m pprofile.ProtoMarshaler
		data, err := m.MarshalProfiles(pd)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u pprofile.ProtoUnmarshaler
		pd, err := u.UnmarshalProfiles(data)
		if err != nil {
			return
		}
		chunks, drops := FromProfiles(pd, ExportOptions{})
		for i, c := range chunks {
			if err := sentry.Validate(c.Profile, sentry.DefaultLimits()); err != nil {
				t.Fatalf("chunk %d is invalid: %v", i, err)
			}
			if c.ResourceIndex < 0 || c.ResourceIndex >= pd.ResourceProfiles().Len() {
				t.Fatalf("chunk %d: resource index %d out of range", i, c.ResourceIndex)
			}
			_ = sentry.AppendChunkJSON(nil, c.Profile)
		}
		for _, d := range drops {
			if d.Err == nil || d.Reason == "" || d.Samples < 0 {
				t.Fatalf("drop without reason or count: %+v", d)
			}
		}
	})
}

// fuzzSeeds are the shapes the exporter must handle: what the receiver
// produces and what other OTLP producers send.
func fuzzSeeds(tb testing.TB) []pprofile.Profiles {
	var seeds []pprofile.Profiles
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		p, err := sentry.DecodeProfile(data)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{}))
	}

	o := newOTLPBuilder()
	sp := o.resource(map[string]any{"service.name": "seed"})
	m := o.mapping("/bin/seed", 0x1000, 0x9000, 0, "abcdef")
	l1 := o.location(0x1234, m, "native")
	l2 := o.location(0, 0, "cpython", testLine{fn: "f", file: "f.py", line: 1}, testLine{fn: "g", file: "g.py", line: 2})
	s := o.stack(l1, l2)
	p := o.profile(sp, "cpu", "nanoseconds", t0, 1e9, "cpu", "nanoseconds", 10_000_000)
	addSample(p, s, []int32{o.attr("thread.id", int64(3))}, []int64{50_000_000}, nil)
	q := o.profile(sp, "samples", "count", t0, 100e9, "", "", 0)
	addSample(q, s, nil, []int64{2, 1}, []uint64{t0, t0 + 90e9})
	return append(seeds, o.pd)
}

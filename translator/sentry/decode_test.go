package sentry

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
)

// envelopeItem is one item of a Sentry envelope fixture.
type envelopeItem struct {
	Type    string
	Payload []byte
}

// splitEnvelope splits envelope text into its items: a header line, then
// per item a header line and a payload of `length` bytes or up to the next
// newline. A length running past the end falls back to the line, and a line
// that is not a JSON header ends the envelope: the HEAD_ONLY Perfetto fixture
// was trimmed after capture and ends with a placeholder for its binary trace.
func splitEnvelope(t testing.TB, data []byte) []envelopeItem {
	t.Helper()
	_, rest, ok := bytes.Cut(data, []byte("\n"))
	require.True(t, ok, "envelope has no header line")
	var items []envelopeItem
	for len(bytes.TrimSpace(rest)) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if !bytes.HasPrefix(line, []byte("{")) {
			break
		}
		var header struct {
			Type   string `json:"type"`
			Length *int   `json:"length"`
		}
		require.NoError(t, json.Unmarshal(line, &header), "item header %q", line)
		var payload []byte
		if header.Length != nil && *header.Length <= len(after) {
			payload, after = after[:*header.Length], after[*header.Length:]
			after = bytes.TrimPrefix(after, []byte("\n"))
		} else {
			payload, after, _ = bytes.Cut(after, []byte("\n"))
		}
		items = append(items, envelopeItem{Type: header.Type, Payload: payload})
		rest = after
	}
	return items
}

// profilePayloads returns every sample-format candidate among the shared
// fixtures: the JSON files and the profile items of the envelopes, by name.
func profilePayloads(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, path := range fixtures.Files(t, ".json") {
		if strings.HasSuffix(path, "request_headers.json") || strings.Contains(path, "envelope_header") || strings.Contains(path, "envelope_item_header") {
			continue
		}
		out[filepath.Base(path)] = fixtures.Read(t, filepath.Base(path))
	}
	for _, path := range fixtures.Files(t, ".envelope", ".envelope.HEAD_ONLY.txt") {
		for i, item := range splitEnvelope(t, fixtures.Read(t, filepath.Base(path))) {
			if item.Type == "profile" || item.Type == "profile_chunk" {
				out[filepath.Base(path)+"#"+string(rune('0'+i))] = item.Payload
			}
		}
	}
	return out
}

func decodeFixture(t *testing.T, name string) *Profile {
	t.Helper()
	p, err := DecodeProfile(fixtures.Read(t, name))
	require.NoError(t, err)
	return p
}

func decodeEnvelopeProfile(t *testing.T, name string) *Profile {
	t.Helper()
	for _, item := range splitEnvelope(t, fixtures.Read(t, name)) {
		if item.Type == "profile" || item.Type == "profile_chunk" {
			p, err := DecodeProfile(item.Payload)
			require.NoError(t, err)
			return p
		}
	}
	t.Fatalf("%s has no profile item", name)
	return nil
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestDecodeProfileFixtures(t *testing.T) {
	tests := []struct {
		name  string
		load  func(*testing.T, string) *Profile
		check func(*testing.T, *Profile)
	}{
		{
			name: "relay__relay-profiling_tests_fixtures_sample_v1_valid.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, VersionV1, p.Version)
				assert.Equal(t, "41fed0925670468bb0457f61a74688ec", p.EventID)
				assert.Equal(t, "cocoa", p.Platform)
				assert.Equal(t, "0.1 (199)", p.Release)
				assert.Equal(t, utc("2022-09-01T09:45:00Z"), p.Timestamp)
				assert.Equal(t, Device{Architecture: "arm64e", IsEmulator: BoolFalse, Locale: "en_US", Manufacturer: "Apple", Model: "iPhone14,3"}, p.Device)
				assert.Equal(t, OS{Name: "iOS", Version: "16.0", BuildNumber: "19H253"}, p.OS)
				require.Len(t, p.Samples, 4)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "1", QueueAddress: "0x0000000102adc700", ElapsedSinceStartNS: 10500500}, p.Samples[0])
				assert.Equal(t, uint64(40500500), p.Samples[3].ElapsedSinceStartNS)
				assert.Equal(t, Stacks{FrameIndices: []int64{0, 1}, Offsets: []int{0, 1}}, p.Stacks)
				require.Len(t, p.Frames, 2)
				assert.Equal(t, uint64(0xa722447ffffffffc), p.Frames[0].InstructionAddr)
				assert.Equal(t, uint64(0x442e4b81f5031e58), p.Frames[1].InstructionAddr)
				assert.Equal(t, []ThreadMetadata{{ThreadID: "1", Priority: 31, HasPriority: true}, {ThreadID: "2"}}, p.ThreadMetadata)
				assert.Equal(t, []QueueMetadata{
					{Address: "0x0000000102adc700", Label: "com.apple.main-thread"},
					{Address: "0x000000016d8fb180", Label: "com.apple.network.connections"},
				}, p.QueueMetadata)
				require.Len(t, p.DebugMeta.Images, 1)
				assert.Equal(t, Image{
					Type:        "macho",
					CodeFile:    "/private/var/containers/Bundle/Application/C3511752-DD67-4FE8-9DA2-ACE18ADFAA61/TrendingMovies.app/TrendingMovies",
					DebugID:     "32420279-25E2-34E6-8BC7-8A006A8F2425",
					ImageAddr:   0x10258c000,
					ImageVMAddr: 0x100000000,
					ImageSize:   1720320,
				}, p.DebugMeta.Images[0])
				assert.Equal(t, []Transaction{{
					ID:              "30976f2ddbe04ac9b6bffe6e35d4710c",
					Name:            "example_ios_movies_sources.MoviesViewController",
					TraceID:         "4b25bc58f14243d8b208d1e22a054164",
					SegmentID:       "bd2eb23da2beb459",
					ActiveThreadID:  "259",
					RelativeStartNS: 500500,
					RelativeEndNS:   50500500,
				}}, p.Transactions)
			},
		},
		{
			name: "relay__relay-profiling_tests_fixtures_sample_v2_valid.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, VersionV2, p.Version)
				assert.Equal(t, "0432a0a4c25f4697bf9f0a2fcbe6a814", p.ChunkID)
				assert.Equal(t, "4d229f1d3807421ba62a5f8bc295d836", p.ProfilerID)
				assert.Equal(t, ClientSDK{Name: "sentry-cocoa", Version: "7.6.1"}, p.ClientSDK)
				assert.Equal(t, time.Unix(1710805688, 237000000).UTC(), p.Timestamp)
				require.Len(t, p.Samples, 4)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "0x0000000102adc700", Timestamp: 1710805788_500000000}, p.Samples[0])
				assert.Equal(t, int64(1710805788_530000000), p.Samples[3].Timestamp)
				assert.Equal(t, []ThreadMetadata{
					{ThreadID: "0x0000000102adc700", Name: "com.apple.main-thread"},
					{ThreadID: "0x000000016d8fb180", Name: "com.apple.network.connections"},
				}, p.ThreadMetadata)
			},
		},
		{
			name: "sentry__fixtures_profiles_valid_js_profile.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				// event_id and its alias profile_id disagree: the canonical key wins.
				assert.Equal(t, "961d6b96017644db895eafd391682003", p.EventID)
				assert.Equal(t, "javascript", p.Platform)
				assert.Empty(t, p.Release, "release: null is absent")
				assert.Equal(t, utc("2023-11-01T15:27:15.08123Z"), p.Timestamp)
				assert.Equal(t, []Sample{
					{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: 1},
					{StackID: 0, ThreadID: "1", ElapsedSinceStartNS: 2},
				}, p.Samples)
				assert.Equal(t, []Frame{{AbsPath: "http://example.com/embedded.js", Filename: "file.min.js", Lineno: 1, Colno: 39}}, p.Frames)
				assert.Nil(t, p.ThreadMetadata)
				assert.Nil(t, p.QueueMetadata)
			},
		},
		{
			name: "vroomrs__tests_fixtures__sample_v1_valid_cocoa.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "7621eb0005654725b30eb063406a0e16", p.EventID)
				assert.Equal(t, utc("2025-05-20T06:36:46.395Z"), p.Timestamp)
				assert.Equal(t, "high", p.Device.Classification)
				assert.False(t, p.Device.IsEmulator.Set())
				require.Len(t, p.Samples, 4)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "259", ElapsedSinceStartNS: 97586875}, p.Samples[0])
				assert.Equal(t, []int64{}, p.Stacks.At(1), "the empty (idle) stack")
				assert.Equal(t, int64(510), p.Stacks.At(0)[0])
				assert.Equal(t, Frame{
					Function:        "CFStringCreateMutable",
					Symbol:          "CFStringCreateMutable",
					Package:         "/Library/Developer/CoreSimulator/Volumes/iOS_21F79/Library/Developer/CoreSimulator/Profiles/Runtimes/iOS 17.5.simruntime/Contents/Resources/RuntimeRoot/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
					InApp:           BoolFalse,
					Platform:        "cocoa",
					InstructionAddr: 0x18043318c,
					SymbolAddr:      0x180433054,
					Status:          "symbolicated",
					Data:            "{}",
				}, p.Frames[0])
				assert.Equal(t, ThreadMetadata{ThreadID: "259", Name: "main", Priority: 31, HasPriority: true}, p.ThreadMetadata[1])
				assert.Len(t, p.DebugMeta.Images, 5)
				assert.Equal(t, "arm64", p.DebugMeta.Images[1].Arch)
				assert.Equal(t, uint64(245760), p.DebugMeta.Images[2].ImageSize)
				require.Len(t, p.Measurements, 3)
				assert.Equal(t, "cpu_energy_usage", p.Measurements[0].Name)
				assert.Equal(t, "nanojoule", p.Measurements[0].Unit)
				assert.Equal(t, MeasurementValue{ElapsedSinceStartNS: 350203333, Value: 2302412}, p.Measurements[0].Values[0])
				assert.InDelta(t, 226.66665649414065, p.Measurements[1].Values[1].Value, 1e-9)
				assert.Equal(t, "memory_footprint", p.Measurements[2].Name)
				assert.Equal(t, []Transaction{{
					ID:             "748874cc7cea4178ba4cd3dd9dad3c1b",
					Name:           "launch",
					TraceID:        "5b4e63e7d65a46faa8438356beedba37",
					SegmentID:      "8be23b3c2acf4233",
					ActiveThreadID: "259",
				}}, p.Transactions)
			},
		},
		{
			name: "vroomrs__tests_fixtures__sample_v1_valid_python.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, Runtime{Name: "CPython", Version: "3.13.1"}, p.Runtime)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "133875472791232", ElapsedSinceStartNS: 1791821}, p.Samples[0])
				assert.Equal(t, Frame{
					Function: "_worker", Module: "concurrent.futures.thread", Filename: "concurrent/futures/thread.py",
					AbsPath: "/usr/local/lib/python3.13/concurrent/futures/thread.py", Lineno: 90, InApp: BoolFalse,
					Platform: "python", Data: "{}",
				}, p.Frames[0])
				assert.Equal(t, "133877343446720", p.Transactions[0].ActiveThreadID)
				assert.Nil(t, p.QueueMetadata, "queue_metadata: null is absent")
				assert.Empty(t, p.DebugMeta.Images)
			},
		},
		{
			name: "vroomrs__tests_fixtures__sample_v2_valid_cocoa.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				require.Len(t, p.Measurements, 1)
				assert.Equal(t, Measurement{Name: "cpu", Unit: "hz", Values: []MeasurementValue{
					{Timestamp: 1234_123000000, Value: 66},
					{Timestamp: 1235_123000000, Value: 72},
				}}, p.Measurements[0])
			},
		},
		{
			name: "vroomrs__tests_fixtures__sample_v2_valid_android.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "android", p.Platform)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "1", Timestamp: 1710805688_117936800}, p.Samples[0])
				assert.Equal(t, Frame{
					Function: "__start_thread", Package: "/apex/com.android.runtime/lib64/bionic/libc.so",
					InstructionAddr: 0x7f9281a000, Platform: "native", InApp: BoolFalse,
				}, p.Frames[3])
				assert.Equal(t, Frame{Function: "onCreate", Module: "io.sentry.samples.android.MainActivity", Lineno: 42, InApp: BoolTrue}, p.Frames[1])
				assert.Equal(t, []ThreadMetadata{
					{ThreadID: "1", Name: "main", Priority: 5, HasPriority: true},
					{ThreadID: "2", Name: "sentry.io-thread", Priority: 10, HasPriority: true},
				}, p.ThreadMetadata)
			},
		},
		{
			name: "vroom__test_data__node.json",
			load: decodeFixture,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "node", p.Platform)
				require.Len(t, p.Samples, 44)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "0", ElapsedSinceStartNS: 55000}, p.Samples[0])
				assert.Equal(t, Sample{StackID: 37, ThreadID: "0", ElapsedSinceStartNS: 484554000}, p.Samples[43])
				assert.Equal(t, 38, p.Stacks.Len())
				assert.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7}, p.Stacks.At(0))
				require.Len(t, p.Frames, 303)
				assert.Equal(t, Frame{
					Function: "startProfiling", Lineno: 37, Colno: 19,
					Filename: "/home/runner/work/sentry/sentry/node_modules/@sentry/profiling-node/lib/cpu_profiler.js",
				}, p.Frames[0], "in_app: null is absent")
				assert.Equal(t, []ThreadMetadata{{ThreadID: "0", Name: "main"}}, p.ThreadMetadata)
				assert.Equal(t, "0", p.Transactions[0].ActiveThreadID)
				assert.Equal(t, uint64(487055420), p.Transactions[0].RelativeEndNS)
			},
		},
		{
			name: "sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope",
			load: decodeEnvelopeProfile,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, VersionV1, p.Version)
				assert.Equal(t, "c8ab7887bbc545e9b9486e6b7c2a6a51", p.EventID)
				assert.Equal(t, utc("2026-11-22T06:26:37.055119Z"), p.Timestamp)
				assert.Equal(t, Device{Architecture: "x86_64"}, p.Device)
				require.Len(t, p.Samples, 320)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "140203964491456", ElapsedSinceStartNS: 14375291}, p.Samples[0])
				assert.Equal(t, uint64(1500609562), p.Samples[319].ElapsedSinceStartNS)
				assert.Equal(t, 14, p.Stacks.Len())
				assert.Equal(t, Frame{AbsPath: "/srv/app/run_v1.py", Module: "__main__", Filename: "run_v1.py", Function: "busy_hash", Lineno: 8, InApp: BoolTrue}, p.Frames[0])
				assert.Equal(t, []Transaction{{
					ID: "a2c6f3cc518c44719ee95a36f07cda36", Name: "capture-v1-transaction",
					TraceID: "dd2619a66dba46f7939c718fdab394b6", ActiveThreadID: "140204100574080",
					RelativeEndNS: 1506155868,
				}}, p.Transactions)
				assert.Equal(t, ThreadMetadata{ThreadID: "140204100574080", Name: "MainThread"}, p.ThreadMetadata[0])
			},
		},
		{
			name: "sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope",
			load: decodeEnvelopeProfile,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, VersionV2, p.Version)
				assert.Equal(t, "a822bab2e2a44e1a9518437256b1773d", p.ChunkID)
				assert.Equal(t, "6681f18722ad4138bca2b0446f42f940", p.ProfilerID)
				assert.True(t, p.Timestamp.IsZero())
				require.Len(t, p.Samples, 347)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "140195205740224", Timestamp: 1795328774_365187400}, p.Samples[0])
				assert.Equal(t, int64(1795328777_352225000), p.Samples[346].Timestamp)
				assert.Len(t, p.Frames, 20)
				assert.Equal(t, uint32(389), p.Frames[0].Lineno)
				assert.Equal(t, "ContinuousScheduler.make_sampler.<locals>._sample_stack", p.Frames[0].Function)
				assert.Equal(t, "hash-worker", p.ThreadMetadata[2].Name)
			},
		},
		{
			name: "sentry-python-2.68.0__captured_http__v2_profile_chunk_2.envelope",
			load: decodeEnvelopeProfile,
			check: func(t *testing.T, p *Profile) {
				require.Len(t, p.Samples, 293)
				assert.Equal(t, Sample{StackID: 0, ThreadID: "140195197347520", Timestamp: 1795328777_372290100}, p.Samples[0])
				assert.Equal(t, 18, p.Stacks.Len())
				assert.Len(t, p.Frames, 38)
				assert.Equal(t, "sentry-sdk.BackgroundWorker", p.ThreadMetadata[2].Name)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, tt.load(t, tt.name))
		})
	}
}

// The JVM "profile" object alone (as nested in a chunk) decodes once wrapped
// in a chunk.
func TestDecodeProfileJavaProfileObject(t *testing.T) {
	inner := fixtures.Read(t, "sentry-java__sentry_src_test_resources_json_sentry_profile.json")
	payload := append(append([]byte(`{"version":"2","platform":"java","profile":`), inner...), '}')
	p, err := DecodeProfile(payload)
	require.NoError(t, err)
	assert.Equal(t, []Sample{
		{StackID: 0, ThreadID: "57", Timestamp: 1753439655_387274000},
		{StackID: 1, ThreadID: "57", Timestamp: 1753439655_415672000},
	}, p.Samples)
	assert.Equal(t, []int64{3, 4}, p.Stacks.At(1))
	assert.Equal(t, Frame{Function: "execute", Module: "io.sentry.samples.spring.boot.jakarta.quartz.SampleJob", Filename: "io.sentry.samples.spring.boot.jakarta.quartz.SampleJob", Lineno: 14, InApp: BoolTrue}, p.Frames[3])
	assert.Equal(t, []ThreadMetadata{{ThreadID: "57", Name: "http-nio-8080-Acceptor", Priority: 0, HasPriority: true}}, p.ThreadMetadata)
}

func TestDecodeProfileForeignFormats(t *testing.T) {
	tests := []struct {
		name string
		want Reason
	}{
		{"vroomrs__tests_fixtures__android_chunk_valid.json", ReasonPlatformNotSupported},
		{"vroomrs__tests_fixtures__android_chunk_valid_2_android_trace.json", ReasonPlatformNotSupported},
		{"vroomrs__tests_fixtures__android_profile_valid.json", ReasonPlatformNotSupported},
		{"vroom__test_data__cocoa.json", ReasonUnsupportedVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeProfile(fixtures.Read(t, tt.name))
			assertReason(t, err, tt.want)
		})
	}
	t.Run("perfetto chunk metadata", func(t *testing.T) {
		items := splitEnvelope(t, fixtures.Read(t, "relay__relay-profiling_tests_fixtures_android_perfetto_profile_chunk.envelope.HEAD_ONLY.txt"))
		require.Len(t, items, 1)
		_, err := DecodeProfile(items[0].Payload)
		assertReason(t, err, ReasonPlatformNotSupported)
	})
}

// assertReason asserts that err is a whole-payload *Error with reason want.
func assertReason(t *testing.T, err error, want Reason) {
	t.Helper()
	_ = reasonError(t, err, want)
}

// reasonError asserts what assertReason does and returns the *Error, for
// the tests that look further into it.
func reasonError(t *testing.T, err error, want Reason) *Error {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e, "want *Error with %s", want)
	assert.Equal(t, want, e.Reason, "error: %v", err)
	assert.Equal(t, -1, e.Item)
	return e
}

func TestDecodeProfileFlexibleTypes(t *testing.T) {
	const head = `{"version":"2","platform":"python",`
	tests := []struct {
		name  string
		json  string
		check func(*testing.T, *Profile)
	}{
		{
			name: "thread ids as numbers keep their decimal text",
			json: head + `"profile":{"samples":[{"stack_id":0,"thread_id":18446744073709551615,"timestamp":1}],"thread_metadata":{"7":{"priority":-2}}}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "18446744073709551615", p.Samples[0].ThreadID)
				assert.Equal(t, []ThreadMetadata{{ThreadID: "7", Priority: -2, HasPriority: true}}, p.ThreadMetadata)
			},
		},
		{
			name: "addresses as hex, decimal string and number",
			json: head + `"profile":{"frames":[{"instruction_addr":"0XFFFFFFFFFFFFFFFF","sym_addr":"4096","image_addr":4096},{"instruction_addr":"0x0000000000000000000001"}]}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, Frame{InstructionAddr: 1<<64 - 1, SymbolAddr: 4096, ImageAddr: 4096}, p.Frames[0])
				assert.Equal(t, uint64(1), p.Frames[1].InstructionAddr)
			},
		},
		{
			name: "image_size and counters as numeric strings",
			json: head + `"debug_meta":{"images":[{"type":"elf","image_size":"1720320","image_addr":"0x7f00","code_id":"abc","debug_file":"libc.so.debug"}]},` +
				`"transactions":[{"relative_start_ns":"5","relative_end_ns":6,"active_thread_id":"259"}]}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, Image{Type: "elf", ImageSize: 1720320, ImageAddr: 0x7f00, CodeID: "abc", DebugFile: "libc.so.debug"}, p.DebugMeta.Images[0])
				assert.Equal(t, []Transaction{{RelativeStartNS: 5, RelativeEndNS: 6, ActiveThreadID: "259"}}, p.Transactions)
			},
		},
		{
			name: "null is absent everywhere",
			json: `{"version":"1","platform":null,"release":null,"timestamp":null,"device":null,"os":{"name":null},"transaction":null,"transactions":null,"measurements":null,"debug_meta":null,` +
				`"profile":{"samples":[{"stack_id":0,"thread_id":null,"elapsed_since_start_ns":null,"queue_address":null}],"stacks":null,"frames":[{"lineno":null,"in_app":null,"instruction_addr":null,"data":null}],"thread_metadata":{"1":null},"queue_metadata":null}}`,
			check: func(t *testing.T, p *Profile) {
				// The os object is there; its null name is not.
				assert.Equal(t, &Profile{Version: VersionV1, Present: FieldOS, Samples: []Sample{{}}, Frames: []Frame{{}}}, p)
			},
		},
		{
			name: "transaction and transactions both kept, transaction first",
			json: head + `"transactions":[{"id":"b"}],"transaction":{"id":"a","name":"n","trace_id":"t","segment_id":"s"}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, []Transaction{{ID: "a", Name: "n", TraceID: "t", SegmentID: "s"}, {ID: "b"}}, p.Transactions)
			},
		},
		{
			name: "profile_id is an alias of event_id",
			json: `{"version":"1","profile_id":"ABCDEF00-0000-4000-8000-000000000001"}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "ABCDEF00-0000-4000-8000-000000000001", p.EventID)
			},
		},
		{
			name: "frame aliases yield to canonical keys",
			json: head + `"profile":{"frames":[{"name":"alias","function":"canonical","line":1,"file":"f","column":3},{"function":"canonical","name":"alias","lineno":2,"line":9,"symbol_addr":"0x10","sym_addr":"0x20"}]}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, Frame{Function: "canonical", Lineno: 1, Filename: "f", Colno: 3}, p.Frames[0])
				assert.Equal(t, Frame{Function: "canonical", Lineno: 2, SymbolAddr: 0x10}, p.Frames[1])
			},
		},
		{
			name: "repeated keys: last wins, objects replaced whole",
			json: head + `"release":"1","release":"2","device":{"model":"a","locale":"x"},"device":{"model":"b"},` +
				`"profile":{"thread_metadata":{"1":{"name":"a"},"2":{"name":"b"},"1":{"name":"c"}},"samples":[{"stack_id":1,"stack_id":2}],"samples":[{"stack_id":3}]}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "2", p.Release)
				assert.Equal(t, Device{Model: "b"}, p.Device)
				assert.Equal(t, []ThreadMetadata{{ThreadID: "1", Name: "c"}, {ThreadID: "2", Name: "b"}}, p.ThreadMetadata)
				assert.Equal(t, []Sample{{StackID: 3}}, p.Samples)
			},
		},
		{
			name: "string escapes, surrogate pairs and invalid UTF-8",
			json: head + "\"release\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\",\"environment\":\"lone \\ud800 x\",\"dist\":\"bad \xff\xfe end\"}",
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "a\"b\\c/d\b\f\n\r\té😀", p.Release)
				assert.Equal(t, "lone \uFFFD x", p.Environment)
				assert.Equal(t, "bad \uFFFD\uFFFD end", p.Dist)
			},
		},
		{
			name: "escaped keys match",
			json: head + `"\u0072elease":"r","profile":{"thread_metadata":{"t\u0031":{"n\u0061me":"x"}}}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, "r", p.Release)
				assert.Equal(t, []ThreadMetadata{{ThreadID: "t1", Name: "x"}}, p.ThreadMetadata)
			},
		},
		{
			name: "frame data kept compact and verbatim",
			json: head + "\"profile\":{\"frames\":[{\"data\":{ \"a\" : [1, 2.50e0],\n\"s\":\"x y\\u00e9\" }},{\"data\":\"raw\"}]}}",
			check: func(t *testing.T, p *Profile) {
				//nolint:testifylint // byte for byte, not JSONEq: the case is that the data is compacted and otherwise kept verbatim
				assert.Equal(t, `{"a":[1,2.50e0],"s":"x y\u00e9"}`, p.Frames[0].Data)
				assert.Equal(t, `"raw"`, p.Frames[1].Data)
			},
		},
		{
			name: "negative and huge stack and frame indices decode for Validate",
			json: head + `"profile":{"samples":[{"stack_id":-1},{"stack_id":9223372036854775807}],"stacks":[[-9223372036854775808,5]]}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, int64(-1), p.Samples[0].StackID)
				assert.Equal(t, int64(9223372036854775807), p.Samples[1].StackID)
				assert.Equal(t, []int64{-9223372036854775808, 5}, p.Stacks.At(0))
			},
		},
		{
			name: "empty stacks keep their place",
			json: head + `"profile":{"stacks":[[],[1],[],[2,3]]}}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, Stacks{FrameIndices: []int64{1, 2, 3}, Offsets: []int{0, 0, 1, 1}}, p.Stacks)
				assert.Equal(t, []int64{}, p.Stacks.At(2))
			},
		},
		{
			name: "RFC 3339 timestamp with offset is kept as UTC",
			json: `{"version":"1","timestamp":"2023-01-12T10:24:54.614+02:00"}`,
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, utc("2023-01-12T08:24:54.614Z"), p.Timestamp)
				assert.Equal(t, time.UTC, p.Timestamp.Location())
			},
		},
		{
			name: "booleans and whitespace",
			json: " \t\r\n{ \"version\" : \"1\" , \"device\" : { \"is_emulator\" : true } } \n",
			check: func(t *testing.T, p *Profile) {
				assert.Equal(t, BoolTrue, p.Device.IsEmulator)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeProfile([]byte(tt.json))
			require.NoError(t, err)
			tt.check(t, p)
		})
	}
}

func TestDecodeProfileTimestamps(t *testing.T) {
	tests := []struct {
		text string
		want int64
	}{
		{"1724777211.5037799", 1724777211_503779900},
		{"1724777211.503779912345", 1724777211_503779912},
		{"1724777211.503779919999", 1724777211_503779919},
		{"1710805788.500", 1710805788_500000000},
		{"1710805788", 1710805788_000000000},
		{"0.000000001", 1},
		{"0.0000000009", 0},
		{"0", 0},
		{"1.7e9", 1700000000_000000000},
		{"1.7247772115037799E+9", 1724777211_503779900},
		{"17247772115037799e-7", 1724777211_503779900},
		{"0.5e1", 5_000000000},
		{"0e999999999999", 0},
		{"1e-999999999999", 0},
		{"-1.5", -1_500000000},
		{"-0.000000001", -1},
		{"9223372035.999999999", 9223372035_999999999},
		{`"1795328774.3651874"`, 1795328774_365187400},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			payload := `{"version":"2","profile":{"samples":[{"timestamp":` + tt.text + `}]},"measurements":{"m":{"values":[{"timestamp":` + tt.text + `}]}}}`
			p, err := DecodeProfile([]byte(payload))
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Samples[0].Timestamp)
			assert.Equal(t, tt.want, p.Measurements[0].Values[0].Timestamp)
		})
	}
}

func TestDecodeProfileErrors(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	tests := []struct {
		name string
		json string
		want Reason
		// msg is a substring of the message: the field path and offset.
		msg string
	}{
		{"empty input", ``, ReasonInvalidJSON, "unexpected end of input"},
		{"not an object", `[1]`, ReasonInvalidJSON, "expected object, found array at byte offset 0"},
		{"trailing data", `{"version":"2"} x`, ReasonInvalidJSON, "unexpected data after the top-level value at byte offset 16"},
		{"trailing NUL", "{\"version\":\"2\"}\x00", ReasonInvalidJSON, "unexpected data after the top-level value at byte offset 15"},
		{"NUL inside an object", "{\"version\":\"2\",\x00}", ReasonInvalidJSON, "expected object key"},
		{"unterminated string", `{"version":"2`, ReasonInvalidJSON, "version: unterminated string at byte offset 11"},
		{"missing colon", `{"version" "2"}`, ReasonInvalidJSON, "expected ':', found string at byte offset 11"},
		{"trailing comma in array", `{"version":"2","profile":{"stacks":[[1,]]}}`, ReasonInvalidJSON, "profile.stacks[0][1]: trailing comma at byte offset 39"},
		{"trailing comma in object", `{"version":"2",}`, ReasonInvalidJSON, "expected object key, found '}'"},
		{"stack_id as string", `{"version":"2","profile":{"samples":[{},{"stack_id":"1"}]}}`, ReasonInvalidJSON, "profile.samples[1].stack_id: expected integer, found string at byte offset 52"},
		{"stack_id as float", `{"version":"2","profile":{"samples":[{"stack_id":1.5}]}}`, ReasonInvalidJSON, "profile.samples[0].stack_id: expected an integer"},
		{"stack_id overflows int64", `{"version":"2","profile":{"samples":[{"stack_id":9223372036854775808}]}}`, ReasonInvalidJSON, "profile.samples[0].stack_id: integer overflows int64"},
		{"frame index overflows int64", `{"version":"2","profile":{"stacks":[[0],[1,-9223372036854775809]]}}`, ReasonInvalidJSON, "profile.stacks[1][1]: integer overflows int64"},
		{"leading zero", `{"version":"2","profile":{"stacks":[[01]]}}`, ReasonInvalidJSON, "profile.stacks[0][0]: invalid number"},
		{"elapsed negative", `{"version":"1","profile":{"samples":[{"elapsed_since_start_ns":-1}]}}`, ReasonInvalidJSON, "elapsed_since_start_ns: negative value"},
		{"elapsed overflows uint64", `{"version":"1","profile":{"samples":[{"elapsed_since_start_ns":"18446744073709551616"}]}}`, ReasonInvalidJSON, "elapsed_since_start_ns: expected a non-negative integer string of at most 64 bits"},
		{"lineno overflows uint32", `{"version":"2","profile":{"frames":[{"lineno":4294967296}]}}`, ReasonInvalidJSON, "profile.frames[0].lineno: integer overflows uint32"},
		{"address too wide", `{"version":"2","profile":{"frames":[{"instruction_addr":"0x10000000000000000"}]}}`, ReasonInvalidJSON, `instruction_addr: invalid address "0x10000000000000000"`},
		{"address not hex", `{"version":"2","profile":{"frames":[{"instruction_addr":"0xzz"}]}}`, ReasonInvalidJSON, "invalid address"},
		{"timestamp NaN", `{"version":"2","profile":{"samples":[{"timestamp":"NaN"}]}}`, ReasonInvalidJSON, `profile.samples[0].timestamp: invalid or out-of-range seconds "NaN"`},
		{"timestamp Infinity", `{"version":"2","profile":{"samples":[{"timestamp":Infinity}]}}`, ReasonInvalidJSON, "expected number"},
		{"timestamp beyond int64 nanoseconds", `{"version":"2","profile":{"samples":[{"timestamp":9223372036.9}]}}`, ReasonInvalidJSON, "timestamp out of range for Unix nanoseconds"},
		{"timestamp exponent overflow", `{"version":"2","profile":{"samples":[{"timestamp":1e30}]}}`, ReasonInvalidJSON, `timestamp out of range for Unix nanoseconds: seconds "1e30"`},
		{"bad RFC 3339", `{"version":"1","timestamp":"yesterday"}`, ReasonInvalidJSON, `timestamp: invalid RFC 3339 timestamp "yesterday"`},
		{"numeric timestamp beyond year 9999", `{"version":"2","timestamp":253402300800}`, ReasonInvalidJSON, "timestamp: timestamp out of range"},
		{"negative thread id", `{"version":"2","profile":{"samples":[{"thread_id":-1}]}}`, ReasonInvalidJSON, "thread_id: negative id"},
		{"float thread id", `{"version":"2","profile":{"samples":[{"thread_id":1.5}]}}`, ReasonInvalidJSON, "thread_id: expected an integer id"},
		{"invalid escape", `{"version":"2","release":"a\x"}`, ReasonInvalidJSON, "release: invalid escape"},
		{"short unicode escape", `{"version":"2","release":"\u12"}`, ReasonInvalidJSON, `release: invalid \u escape`},
		{"raw control character", "{\"version\":\"2\",\"release\":\"a\nb\"}", ReasonInvalidJSON, "release: control character in string"},
		{"bad literal", `{"version":"2","device":{"is_emulator":tru}}`, ReasonInvalidJSON, "device.is_emulator: invalid literal"},
		{"unknown key with bad value", `{"version":"2","zz":[1,2}`, ReasonInvalidJSON, "zz: expected ',' or ']', found '}'"},
		{"unknown sample key with bad value", `{"version":"2","profile":{"samples":[{"stack_id":0,"zz":[tru]}]}}`, ReasonInvalidJSON, "profile.samples[0].zz: invalid literal"},
		{"escaped sample key", `{"version":"2","profile":{"samples":[{"st\u0061ck_id":"x"}]}}`, ReasonInvalidJSON, "profile.samples[0].stack_id: expected integer"},
		{"deep nesting", `{"version":"2","zz":` + deep + `}`, ReasonInvalidJSON, "zz: nesting deeper than 512 levels"},
		{"stack is not an array", `{"version":"2","profile":{"stacks":[1]}}`, ReasonInvalidJSON, "profile.stacks[0]: expected array, found number"},
		{"version as number", `{"version":2}`, ReasonInvalidJSON, "version: expected string, found number"},
		{"version absent", `{"platform":"python","profile":{}}`, ReasonUnsupportedVersion, "version is absent"},
		{"version 3", `{"version":"3","platform":"python"}`, ReasonUnsupportedVersion, `version "3" is not supported`},
		{"version absent with a type error", `{"platform":"cocoa","profile":"{}"}`, ReasonUnsupportedVersion, "version is absent"},
		{"legacy android", `{"platform":"android","sampled_profile":"AAAA"}`, ReasonPlatformNotSupported, "sampled_profile"},
		{"android trace with version 2", `{"version":"2","platform":"android","sampled_profile":"AAAA"}`, ReasonPlatformNotSupported, "sampled_profile"},
		{"android trace version", `{"version":"2.android-trace","platform":"android"}`, ReasonPlatformNotSupported, `"2.android-trace"`},
		{"perfetto metadata", `{"version":"2","platform":"android","content_type":"perfetto"}`, ReasonPlatformNotSupported, "Perfetto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeProfile([]byte(tt.json))
			assert.Nil(t, p)
			e := reasonError(t, err, tt.want)
			assert.Contains(t, e.Error(), tt.msg)
		})
	}
}

// TestDecodeProfileDifferential decodes fixtures and random payloads with
// DecodeProfile and with the encoding/json reference and wants the same
// profile.
func TestDecodeProfileDifferential(t *testing.T) {
	check := func(t *testing.T, payload []byte) {
		t.Helper()
		want, refErr := referenceDecode(payload)
		got, err := DecodeProfile(payload)
		if refErr != nil {
			require.Error(t, err, "reference rejects (%v), DecodeProfile accepts\n%s", refErr, payload)
			return
		}
		if err != nil {
			var e *Error
			require.ErrorAs(t, err, &e)
			require.NotEqual(t, ReasonInvalidJSON, e.Reason, "DecodeProfile rejects what the reference accepts: %v\n%s", err, payload)
			return
		}
		if diff := diffProfiles(got, want); diff != "" {
			t.Fatalf("DecodeProfile and the reference differ: %s\npayload: %s", diff, payload)
		}
	}
	t.Run("fixtures", func(t *testing.T) {
		for name, payload := range profilePayloads(t) {
			t.Run(name, func(t *testing.T) { check(t, payload) })
		}
	})
	t.Run("generated", func(t *testing.T) {
		g := payloadGen{rng: rand.New(rand.NewPCG(7, 11))}
		for i := range 600 {
			version := VersionV1
			if i%2 == 0 {
				version = VersionV2
			}
			payload := g.payload(version, g.rng.IntN(20))
			check(t, payload)
			if t.Failed() {
				return
			}
		}
	})
}

// TestDecodeProfileAllocations checks that allocations do not grow with the
// number of samples: thread ids are interned, samples and stacks live in
// amortized slices.
func TestDecodeProfileAllocations(t *testing.T) {
	small, large := largeChunk(1000, 200, 100), largeChunk(20000, 200, 100)
	allocs := func(data []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, err := DecodeProfile(data); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(small), allocs(large)
	// Twenty times the samples may cost a few more slice growths, not
	// allocations per sample.
	assert.Less(t, b-a, 20.0, "allocations: %v for 1000 samples, %v for 20000", a, b)
}

// BenchmarkDecodeProfileV2 decodes a 5 MB chunk (48k samples, 5k stacks, 2k
// frames).
func BenchmarkDecodeProfileV2(b *testing.B) {
	data := largeChunk(48000, 5000, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeProfile(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodingJSONReference decodes the same chunk with encoding/json
// into plain structs, the baseline DecodeProfile is measured against.
func BenchmarkEncodingJSONReference(b *testing.B) {
	type frame struct {
		AbsPath  string `json:"abs_path"`
		Module   string `json:"module"`
		Filename string `json:"filename"`
		Function string `json:"function"`
		Lineno   uint32 `json:"lineno"`
		InApp    *bool  `json:"in_app"`
	}
	type sample struct {
		Timestamp float64 `json:"timestamp"`
		ThreadID  string  `json:"thread_id"`
		StackID   int     `json:"stack_id"`
	}
	type chunk struct {
		ChunkID   string `json:"chunk_id"`
		ClientSDK struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"client_sdk"`
		Platform string `json:"platform"`
		Profile  struct {
			Frames         []frame                      `json:"frames"`
			Stacks         [][]int                      `json:"stacks"`
			Samples        []sample                     `json:"samples"`
			ThreadMetadata map[string]map[string]string `json:"thread_metadata"`
		} `json:"profile"`
		ProfilerID  string `json:"profiler_id"`
		Version     string `json:"version"`
		Release     string `json:"release"`
		Environment string `json:"environment"`
	}
	data := largeChunk(48000, 5000, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// @sentry/profiling-node writes measurement times in epoch milliseconds while
// its samples use epoch seconds; both must land on the same clock.
func TestDecodeMeasurementTimestampClock(t *testing.T) {
	tests := []struct {
		name string
		ts   string
		want int64
	}{
		{"seconds with microseconds", "1795000000.123456", 1795000000123456000},
		{"milliseconds from the node SDK", "1795000000123.456", 1795000000123456000},
		{"whole milliseconds", "1795000000123", 1795000000123000000},
		{"seconds as a string", `"1795000000.5"`, 1795000000500000000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := `{"version":"2","profiler_id":"71bba98d90b545c39f2ae73f702d7ef4","chunk_id":"3e11a5c9831f4e49939c0a81944ea2cb",` +
				`"platform":"node","client_sdk":{"name":"sentry.javascript.node","version":"11.1.0"},` +
				`"measurements":{"memory_footprint":{"unit":"byte","values":[{"timestamp":` + tt.ts + `,"value":1024}]}},` +
				`"profile":{"samples":[{"stack_id":0,"thread_id":"0","timestamp":1795000000.1}],"stacks":[[0]],"frames":[{"function":"f"}],"thread_metadata":{}}}`
			p, err := DecodeProfile([]byte(payload))
			if err != nil {
				t.Fatalf("DecodeProfile: %v", err)
			}
			if got := p.Measurements[0].Values[0].Timestamp; got != tt.want {
				t.Fatalf("measurement timestamp = %d, want %d", got, tt.want)
			}
		})
	}
	if _, err := DecodeProfile([]byte(`{"version":"2","measurements":{"m":{"unit":"byte","values":[{"timestamp":1e30,"value":1}]}}}`)); err == nil {
		t.Fatal("a timestamp past int64 nanoseconds in either clock must be an error")
	}
}

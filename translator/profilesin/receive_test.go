package profilesin

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

func stacksOf(frames ...[]int64) sentry.Stacks {
	var s sentry.Stacks
	for _, f := range frames {
		s.Append(f...)
	}
	return s
}

// nodeChunk is a V2 chunk shaped like @sentry/profiling-node output: exact
// duplicate frames, an idle sample and unsorted samples.
func nodeChunk() *sentry.Profile {
	handler := sentry.Frame{Function: "handler", AbsPath: "/app/server.js", Filename: "server.js", Lineno: 10, Colno: 3, InApp: sentry.BoolTrue}
	return &sentry.Profile{
		Version:    sentry.VersionV2,
		ProfilerID: "6f1b0c3a9e2d4c8fb1a27d5e3c9f0a41",
		ChunkID:    "c2d4e6f8a0b24c6e8f0a1b3c5d7e9f10",
		Platform:   "node",
		Release:    "shop@1.2.3",
		ClientSDK:  sentry.ClientSDK{Name: "sentry.javascript.node", Version: "11.1.0"},
		Frames: []sentry.Frame{
			handler,
			{Function: "(root)"},
			handler, // a duplicate: one per V8 call-tree node
			{Function: "handler", AbsPath: "/app/server.js", Filename: "server.js", Lineno: 12, Colno: 3, InApp: sentry.BoolTrue},
		},
		Stacks: stacksOf([]int64{0, 1}, []int64{2, 1}, []int64{3, 1}, nil),
		Samples: []sentry.Sample{
			{StackID: 1, ThreadID: "0", Timestamp: 1_795_000_000_030_000_000},
			{StackID: 0, ThreadID: "0", Timestamp: 1_795_000_000_010_000_000},
			{StackID: 2, ThreadID: "0", Timestamp: 1_795_000_000_020_000_000},
			{StackID: 3, ThreadID: "0", Timestamp: 1_795_000_000_040_000_000},
			{StackID: 0, ThreadID: "1", Timestamp: 1_795_000_000_000_000_000},
		},
		ThreadMetadata: []sentry.ThreadMetadata{{ThreadID: "0", Name: "main"}},
	}
}

func TestReceiveDictionaryAndSamples(t *testing.T) {
	b := NewProfilesBuilder(ReceiveOptions{})
	require.Equal(t, 5, b.Add(DecodedProfile{Profile: nodeChunk()}))
	require.Equal(t, 5, b.SampleCount())
	pd := b.Profiles()
	translatortest.RequireValidPdata(t, pd)
	dict := pd.Dictionary()

	// Zero entries + handler:10, (root), handler:12: the duplicate frame
	// shares its location, and both handler lines share one function.
	assert.Equal(t, 1+3, dict.LocationTable().Len())
	assert.Equal(t, 1+2, dict.FunctionTable().Len())
	assert.Equal(t, 1+2, dict.StackTable().Len(), "stacks 0 and 1 are the same once frames are deduplicated; the idle stack is index 0")

	prof := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	assert.Equal(t, pcommon.Timestamp(1_795_000_000_000_000_000), prof.Time())
	assert.Equal(t, uint64(40_000_001), prof.DurationNano(), "half-open span that holds the last sample")
	assert.Equal(t, "wall", dict.StringTable().At(int(prof.SampleType().TypeStrindex())))
	assert.Equal(t, "nanoseconds", dict.StringTable().At(int(prof.SampleType().UnitStrindex())))
	assert.Equal(t, "wall", dict.StringTable().At(int(prof.PeriodType().TypeStrindex())))
	assert.Equal(t, "nanoseconds", dict.StringTable().At(int(prof.PeriodType().UnitStrindex())))
	assert.Equal(t, int64(10_000_000), prof.Period(), "the samples of thread 0 are 10 ms apart")
	assert.Equal(t, "c2d4e6f8a0b24c6e8f0a1b3c5d7e9f10", prof.ProfileID().String())

	type got struct {
		stack      int32
		thread     map[string]any
		timestamps []uint64
	}
	var samples []got
	for _, s := range prof.Samples().All() {
		assert.Equal(t, []int64{10_000_000}, s.Values().AsRaw(), "one period of wall time per sample")
		samples = append(samples, got{s.StackIndex(), translatortest.SampleAttrs(t, pd, s), s.TimestampsUnixNano().AsRaw()})
	}
	service := map[string]any{"service.name": "shop", "service.version": "shop@1.2.3"}
	with := func(m map[string]any) map[string]any {
		for k, v := range service {
			m[k] = v
		}
		return m
	}
	main := with(map[string]any{"thread.id": int64(0), "thread.name": "main"})
	assert.Equal(t, []got{
		{1, main, []uint64{1_795_000_000_010_000_000}},
		{1, main, []uint64{1_795_000_000_030_000_000}},
		{2, main, []uint64{1_795_000_000_020_000_000}},
		{0, main, []uint64{1_795_000_000_040_000_000}},
		{1, with(map[string]any{"thread.id": int64(1)}), []uint64{1_795_000_000_000_000_000}},
	}, samples)

	loc := dict.LocationTable().At(1)
	attrs, err := pprofile.FromAttributeIndices(dict.AttributeTable(), loc, dict)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"profile.frame.type":    "v8js",
		"sentry.frame.filename": "server.js",
		"sentry.frame.in_app":   true,
	}, attrs.AsRaw())
	fn := dict.FunctionTable().At(int(loc.Lines().At(0).FunctionIndex()))
	assert.Equal(t, "handler", dict.StringTable().At(int(fn.NameStrindex())))
	assert.Equal(t, "/app/server.js", dict.StringTable().At(int(fn.FilenameStrindex())), "abs_path is the function's file")
	assert.Equal(t, []int64{10, 3}, []int64{loc.Lines().At(0).Line(), loc.Lines().At(0).Column()})
}

func TestReceiveResource(t *testing.T) {
	v1 := &sentry.Profile{
		Version:     sentry.VersionV1,
		EventID:     "41fed0925670468bb0457f61a74688ec",
		Platform:    "cocoa",
		Release:     "0.1 (199)",
		Environment: "production",
		Dist:        "199",
		Timestamp:   time.Unix(1_700_000_000, 0),
		Device:      sentry.Device{Architecture: "arm64e", IsEmulator: sentry.BoolFalse, Locale: "en_US", Manufacturer: "Apple", Model: "iPhone14,3", Classification: "high"},
		OS:          sentry.OS{Name: "iOS", Version: "16.0", BuildNumber: "19H253"},
		Runtime:     sentry.Runtime{Name: "swift", Version: "5.9"},
		Transactions: []sentry.Transaction{{
			ID: "30976f2ddbe04ac9b6bffe6e35d4710c", Name: "Movies", TraceID: "4b25bc58f14243d8b208d1e22a054164", ActiveThreadID: "259",
		}},
	}
	tests := []struct {
		name string
		p    *sentry.Profile
		opts ReceiveOptions
		want map[string]any
	}{
		{
			name: "V1 device, os and runtime",
			p:    v1,
			opts: ReceiveOptions{ProjectID: "42"},
			want: map[string]any{
				"service.name": "unknown_service:cocoa", "service.version": "0.1 (199)",
				"deployment.environment.name": "production", "sentry.dist": "199", "sentry.platform": "cocoa",
				"sentry.project.id": "42",
				"os.name":           "iOS", "os.version": "16.0", "os.build_id": "19H253",
				"host.arch": "arm64e", "device.model.identifier": "iPhone14,3", "device.manufacturer": "Apple",
				"sentry.device.locale": "en_US", "sentry.device.classification": "high", "sentry.device.is_emulator": false,
				"process.runtime.name": "swift", "process.runtime.version": "5.9",
			},
		},
		{
			name: "V2 service name from a package@version release",
			p:    nodeChunk(),
			want: map[string]any{
				"service.name": "shop", "service.version": "shop@1.2.3", "sentry.platform": "node",
				"telemetry.sdk.name": "sentry.javascript.node", "telemetry.sdk.version": "11.1.0",
			},
		},
		{
			name: "service name override",
			p:    &sentry.Profile{Version: sentry.VersionV2, Release: "shop@1.2.3"},
			opts: ReceiveOptions{ServiceName: "checkout"},
			want: map[string]any{"service.name": "checkout", "service.version": "shop@1.2.3"},
		},
		{
			name: "nothing to name the service after",
			p:    &sentry.Profile{Version: sentry.VersionV2, Release: "@1.0"},
			want: map[string]any{"service.name": "unknown_service", "service.version": "@1.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := toProfiles([]DecodedProfile{{Profile: tt.p}}, tt.opts)
			assert.Equal(t, tt.want, pd.ResourceProfiles().At(0).Resource().Attributes().AsRaw())
		})
	}
}

// TestReceivePerProfileIDs: the ids of one profile (profiler, chunk,
// event, transaction) are profile attributes, never resource attributes: a
// backend that makes series of the resource gets one per service.
func TestReceivePerProfileIDs(t *testing.T) {
	v1 := &sentry.Profile{
		Version: sentry.VersionV1, EventID: "41fed0925670468bb0457f61a74688ec", Platform: "python",
		Timestamp: time.Unix(1_700_000_000, 0),
		Transactions: []sentry.Transaction{{
			ID: "30976f2ddbe04ac9b6bffe6e35d4710c", Name: "Movies", TraceID: "4b25bc58f14243d8b208d1e22a054164",
		}},
	}
	tests := []struct {
		p    *sentry.Profile
		want map[string]any
	}{
		{nodeChunk(), map[string]any{
			"sentry.profiler_id": "6f1b0c3a9e2d4c8fb1a27d5e3c9f0a41", "sentry.chunk_id": "c2d4e6f8a0b24c6e8f0a1b3c5d7e9f10",
		}},
		{v1, map[string]any{
			"sentry.event_id": "41fed0925670468bb0457f61a74688ec", "sentry.transaction.name": "Movies",
			"sentry.transaction.id": "30976f2ddbe04ac9b6bffe6e35d4710c", "sentry.transaction.trace_id": "4b25bc58f14243d8b208d1e22a054164",
		}},
	}
	for _, tt := range tests {
		pd := toProfiles([]DecodedProfile{{Profile: tt.p}}, ReceiveOptions{})
		rp := pd.ResourceProfiles().At(0)
		got := translatortest.ProfileAttrs(pd, rp.ScopeProfiles().At(0).Profiles().At(0))
		for k, v := range tt.want {
			assert.Equal(t, v, got[k], k)
			_, onResource := rp.Resource().Attributes().Get(k)
			assert.False(t, onResource, "%s on the resource", k)
		}
	}
}

func TestReceiveLinks(t *testing.T) {
	const (
		trace = "0af7651916cd43dd8448eb211c80319c"
		start = int64(1_700_000_000_000_000_000)
	)
	base := func() *sentry.Profile {
		return &sentry.Profile{
			Version:   sentry.VersionV1,
			EventID:   "41fed0925670468bb0457f61a74688ec",
			Platform:  "python",
			Timestamp: time.Unix(0, start),
			Frames:    []sentry.Frame{{Function: "f"}},
			Stacks:    stacksOf([]int64{0}),
			Samples: []sentry.Sample{
				{ThreadID: "1", ElapsedSinceStartNS: 10},
				{ThreadID: "1", ElapsedSinceStartNS: 20},
				{ThreadID: "2", ElapsedSinceStartNS: 20},
				{ThreadID: "1", ElapsedSinceStartNS: 40},
			},
			Transactions: []sentry.Transaction{{ID: "30976f2ddbe04ac9b6bffe6e35d4710c", Name: "t", TraceID: trace, SegmentID: "b7ad6b7169203331", ActiveThreadID: "1"}},
		}
	}
	noSegment := base()
	noSegment.Transactions[0].SegmentID = ""
	ranged := base()
	ranged.Transactions[0].RelativeStartNS, ranged.Transactions[0].RelativeEndNS = 15, 30

	tests := []struct {
		name string
		p    *sentry.Profile
		tx   *sentrytrace.Segment
		want []string // span id per input sample, "" for no link
	}{
		{
			name: "innermost span on the sample's thread, else the root span",
			p:    base(),
			tx: &sentrytrace.Segment{
				Spans: []sentrytrace.Span{
					{TraceID: trace, SpanID: "aaaaaaaaaaaaaaaa", IsSegment: true},
					{TraceID: trace, SpanID: "bbbbbbbbbbbbbbbb", Start: start + 5, End: start + 30, Attributes: threadAttr("1")},
					{TraceID: trace, SpanID: "cccccccccccccccc", Start: start + 15, End: start + 25, Attributes: threadAttr("1")},
					{TraceID: trace, SpanID: "dddddddddddddddd", Start: start, End: start + 100, Attributes: threadAttr("3")},
				},
			},
			want: []string{"bbbbbbbbbbbbbbbb", "cccccccccccccccc", "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaa"},
		},
		{
			name: "no transaction item: segment_id of the profile's transaction",
			p:    base(),
			want: []string{"b7ad6b7169203331", "b7ad6b7169203331", "b7ad6b7169203331", "b7ad6b7169203331"},
		},
		{
			name: "segment_id only inside the transaction's relative range",
			p:    ranged,
			want: []string{"", "b7ad6b7169203331", "b7ad6b7169203331", ""},
		},
		{
			name: "no span id anywhere: no link",
			p:    noSegment,
			want: []string{"", "", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := toProfiles([]DecodedProfile{{Profile: tt.p, Transaction: tt.tx}}, ReceiveOptions{})
			translatortest.RequireValidPdata(t, pd)
			prof := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
			got := make([]string, len(tt.p.Samples))
			for _, s := range prof.Samples().All() {
				span := ""
				if s.LinkIndex() > 0 {
					l := pd.Dictionary().LinkTable().At(int(s.LinkIndex()))
					assert.Equal(t, trace, l.TraceID().String())
					span = l.SpanID().String()
				}
				for _, ts := range s.TimestampsUnixNano().All() {
					for i, in := range tt.p.Samples {
						if uint64(start)+in.ElapsedSinceStartNS == ts && translatortest.SampleAttrs(t, pd, s)["thread.id"] == mustInt(in.ThreadID) {
							got[i] = span
						}
					}
				}
				attrs := translatortest.SampleAttrs(t, pd, s)
				assert.Equal(t, attrs["thread.id"] == int64(1), attrs["sentry.thread.active"] == true,
					"the V1 active thread, and only it, is marked")
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, trace, translatortest.ProfileAttrs(pd, prof)["sentry.transaction.trace_id"], "transaction fields stay as attributes")
		})
	}
}

func mustInt(s string) int64 {
	n, ok := threadIDNumber(s)
	if !ok {
		panic(s)
	}
	return n
}

func TestReceiveThreadIDs(t *testing.T) {
	tests := []struct {
		id   string
		want map[string]any
	}{
		{"259", map[string]any{"thread.id": int64(259)}},
		{"0x0000000102adc700", map[string]any{"thread.id": int64(0x102adc700), "sentry.thread.id": "0x0000000102adc700"}},
		{"007", map[string]any{"thread.id": int64(7), "sentry.thread.id": "007"}},
		{"18446744073709551615", map[string]any{"sentry.thread.id": "18446744073709551615"}},
		{"main", map[string]any{"sentry.thread.id": "main"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			p := nodeChunk()
			p.ThreadMetadata = nil
			p.Samples = []sentry.Sample{{StackID: 0, ThreadID: tt.id, Timestamp: 1}, {StackID: 1, ThreadID: tt.id, Timestamp: 2}}
			pd := toProfiles([]DecodedProfile{{Profile: p}}, ReceiveOptions{})
			s := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().At(0)
			tt.want["service.name"], tt.want["service.version"] = "shop", "shop@1.2.3"
			assert.Equal(t, tt.want, translatortest.SampleAttrs(t, pd, s))

			chunks, drops := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
			require.Empty(t, drops)
			require.Len(t, chunks, 1)
			assert.Equal(t, tt.id, chunks[0].Profile.Samples[0].ThreadID, "the Sentry thread id comes back verbatim")
		})
	}
}

func TestReceiveUnvalidatedInput(t *testing.T) {
	p := nodeChunk()
	p.Stacks = stacksOf([]int64{0, 1}, []int64{7}, []int64{-1})
	p.Samples = []sentry.Sample{
		{StackID: 0, ThreadID: "0", Timestamp: 100},
		{StackID: 1, ThreadID: "0", Timestamp: 200}, // frame index out of range
		{StackID: 2, ThreadID: "0", Timestamp: 300}, // negative frame index
		{StackID: 9, ThreadID: "0", Timestamp: 400}, // stack out of range
		{StackID: -3, ThreadID: "0", Timestamp: 500},
		{StackID: 0, ThreadID: "0", Timestamp: -1}, // before the epoch
		{StackID: 0, ThreadID: "0", Timestamp: 600},
	}
	p.DebugMeta.Images = []sentry.Image{{ImageAddr: ^uint64(0) - 10, ImageSize: 100}} // wraps around
	b := NewProfilesBuilder(ReceiveOptions{})
	assert.Equal(t, 2, b.Add(DecodedProfile{Profile: p}))
	assert.Equal(t, 0, b.Add(DecodedProfile{}), "no profile, nothing added")
	empty := nodeChunk()
	empty.Samples = nil
	assert.Equal(t, 0, b.Add(DecodedProfile{Profile: empty}))
	pd := b.Profiles()
	translatortest.RequireValidPdata(t, pd)
	assert.Equal(t, 2, samplecount.Events(pd))
}

func TestReceiveOriginalPayloadAndSharedDictionary(t *testing.T) {
	v1 := nodeChunk()
	v1.Version, v1.EventID, v1.Timestamp = sentry.VersionV1, "41fed0925670468bb0457f61a74688ec", time.Unix(1_795_000_000, 0)
	for i := range v1.Samples {
		v1.Samples[i].ElapsedSinceStartNS = uint64(v1.Samples[i].Timestamp - 1_795_000_000_000_000_000)
		v1.Samples[i].Timestamp = 0
	}
	items := []DecodedProfile{
		{Profile: nodeChunk(), Payload: []byte(`{"version":"2"}`)},
		{Profile: v1, Payload: []byte(`{"version":"1"}`)},
		{Profile: nodeChunk()},
	}
	for _, keep := range []bool{false, true} {
		pd := toProfiles(items, ReceiveOptions{KeepOriginalPayload: keep})
		translatortest.RequireValidPdata(t, pd)
		require.Equal(t, 3, pd.ResourceProfiles().Len(), "one resource per item")
		assert.Equal(t, 1+3, pd.Dictionary().LocationTable().Len(), "the items share one dictionary")
		type payload struct{ format, body string }
		var got []payload
		for _, rp := range pd.ResourceProfiles().All() {
			prof := rp.ScopeProfiles().At(0).Profiles().At(0)
			got = append(got, payload{prof.OriginalPayloadFormat(), string(prof.OriginalPayload().AsRaw())})
		}
		if keep {
			assert.Equal(t, []payload{{OriginalPayloadFormatV2, `{"version":"2"}`}, {OriginalPayloadFormatV1, `{"version":"1"}`}, {}}, got)
		} else {
			assert.Equal(t, []payload{{}, {}, {}}, got)
		}
		v1prof := pd.ResourceProfiles().At(1).ScopeProfiles().At(0).Profiles().At(0)
		assert.Equal(t, pcommon.Timestamp(1_795_000_000_000_000_000), v1prof.Time(), "a V1 profile starts at its timestamp")
		assert.Equal(t, "41fed0925670468bb0457f61a74688ec", v1prof.ProfileID().String())
	}
}

// TestReceiveSampleShapes: by default every Sentry sample is one Sample
// worth one period of wall time; GroupSamples folds the samples of a
// stack, thread and link into one Sample of timestamps (counts). Both come
// back to Sentry as the same samples.
func TestReceiveSampleShapes(t *testing.T) {
	tests := []struct {
		group            bool
		wantType         [2]string
		wantSamples      int
		wantValuesPerTS  bool
		wantTotalWallNs  int64
		wantTimestampSum int
	}{
		{group: false, wantType: [2]string{"wall", "nanoseconds"}, wantSamples: 5, wantValuesPerTS: true, wantTotalWallNs: 5 * 10_000_000, wantTimestampSum: 5},
		{group: true, wantType: [2]string{"samples", "count"}, wantSamples: 4, wantTimestampSum: 5},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("group=", tt.group), func(t *testing.T) {
			pd := toProfiles([]DecodedProfile{{Profile: nodeChunk()}}, ReceiveOptions{GroupSamples: tt.group})
			translatortest.RequireValidPdata(t, pd)
			dict := pd.Dictionary()
			prof := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
			str := func(i int32) string { return dict.StringTable().At(int(i)) }
			assert.Equal(t, tt.wantType, [2]string{str(prof.SampleType().TypeStrindex()), str(prof.SampleType().UnitStrindex())})
			assert.Equal(t, int64(10_000_000), prof.Period())
			assert.Equal(t, tt.wantSamples, prof.Samples().Len())
			var wall int64
			timestamps := 0
			for _, s := range prof.Samples().All() {
				timestamps += s.TimestampsUnixNano().Len()
				if tt.wantValuesPerTS {
					assert.Equal(t, s.TimestampsUnixNano().Len(), s.Values().Len())
				} else {
					assert.Zero(t, s.Values().Len())
				}
				for _, v := range s.Values().All() {
					wall += v
				}
			}
			assert.Equal(t, tt.wantTimestampSum, timestamps)
			assert.Equal(t, tt.wantTotalWallNs, wall)

			// Thread 1 has one sample: Relay drops it, and so does the
			// exporter.
			chunks, drops := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
			require.Len(t, chunks, 1)
			assert.Len(t, chunks[0].Profile.Samples, 4, "every sample of thread 0 comes back")
			require.Len(t, drops, 1)
			assert.Equal(t, 1, drops[0].Samples)
		})
	}
}

// TestReceiveAnonymousFunctions: a frame without a name is "<anonymous>",
// as in Sentry's UI; two of them stay two locations; back to Sentry the
// name is empty again.
func TestReceiveAnonymousFunctions(t *testing.T) {
	p := nodeChunk()
	p.Frames = []sentry.Frame{
		{Filename: "app.js", Lineno: 3, Colno: 5},
		{Filename: "app.js", Lineno: 9, Colno: 1},
		{InstructionAddr: 0x1000}, // an address only: no function at all
	}
	p.Stacks = stacksOf([]int64{0, 1}, []int64{1, 2})
	p.Samples = []sentry.Sample{
		{StackID: 0, ThreadID: "0", Timestamp: 1_795_000_000_000_000_000},
		{StackID: 1, ThreadID: "0", Timestamp: 1_795_000_000_010_000_000},
	}
	pd := toProfiles([]DecodedProfile{{Profile: p}}, ReceiveOptions{})
	translatortest.RequireValidPdata(t, pd)
	dict := pd.Dictionary()
	var names []string
	for _, loc := range dict.LocationTable().All() {
		if loc.Lines().Len() == 0 {
			names = append(names, "(no line)")
			continue
		}
		fn := dict.FunctionTable().At(int(loc.Lines().At(0).FunctionIndex()))
		names = append(names, dict.StringTable().At(int(fn.NameStrindex())))
	}
	assert.Equal(t, []string{"(no line)", "<anonymous>", "<anonymous>", "(no line)"}, names, "zero entry, two anonymous functions, one address")

	chunks, drops := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
	require.Empty(t, drops)
	require.Len(t, chunks, 1)
	for _, f := range chunks[0].Profile.Frames {
		assert.Empty(t, f.Function)
	}
}

// threadAttr is a span's "data" with the thread it ran on.
func threadAttr(id string) []sentrytrace.Attribute {
	return []sentrytrace.Attribute{{Key: "thread.id", Value: id}}
}

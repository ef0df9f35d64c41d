package profilesout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// otlpBuilder writes synthetic OTLP profiles the way other producers do,
// through the plain pdata API: it shares no code with the receiver.
type otlpBuilder struct {
	pd   pprofile.Profiles
	dict pprofile.ProfilesDictionary
}

func newOTLPBuilder() *otlpBuilder {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("")
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	return &otlpBuilder{pd: pd, dict: d}
}

func (o *otlpBuilder) str(s string) int32 {
	i, err := pprofile.SetString(o.dict.StringTable(), s)
	if err != nil {
		panic(err)
	}
	return i
}

func (o *otlpBuilder) attr(key string, value any) int32 {
	a := pprofile.NewKeyValueAndUnit()
	a.SetKeyStrindex(o.str(key))
	if err := a.Value().FromRaw(value); err != nil {
		panic(err)
	}
	i, err := pprofile.SetAttribute(o.dict.AttributeTable(), a)
	if err != nil {
		panic(err)
	}
	return i
}

type testLine struct {
	fn, file  string
	line, col int64
}

// location adds a location; frameType may be empty.
func (o *otlpBuilder) location(addr uint64, mapping int32, frameType string, lines ...testLine) int32 {
	loc := o.dict.LocationTable().AppendEmpty()
	loc.SetAddress(addr)
	loc.SetMappingIndex(mapping)
	for _, l := range lines {
		f := pprofile.NewFunction()
		f.SetNameStrindex(o.str(l.fn))
		f.SetFilenameStrindex(o.str(l.file))
		fi, err := pprofile.SetFunction(o.dict.FunctionTable(), f)
		if err != nil {
			panic(err)
		}
		ln := loc.Lines().AppendEmpty()
		ln.SetFunctionIndex(fi)
		ln.SetLine(l.line)
		ln.SetColumn(l.col)
	}
	if frameType != "" {
		loc.AttributeIndices().Append(o.attr(string(semconv.ProfileFrameTypeKey), frameType))
	}
	return int32(o.dict.LocationTable().Len() - 1)
}

func (o *otlpBuilder) mapping(file string, start, limit, offset uint64, buildID string) int32 {
	m := o.dict.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(o.str(file))
	m.SetMemoryStart(start)
	m.SetMemoryLimit(limit)
	m.SetFileOffset(offset)
	if buildID != "" {
		m.AttributeIndices().Append(o.attr(string(semconv.ProcessExecutableBuildIDGNUKey), buildID))
	}
	return int32(o.dict.MappingTable().Len() - 1)
}

func (o *otlpBuilder) stack(locs ...int32) int32 {
	s := pprofile.NewStack()
	s.LocationIndices().FromRaw(locs)
	i, err := pprofile.SetStack(o.dict.StackTable(), s)
	if err != nil {
		panic(err)
	}
	return i
}

func (o *otlpBuilder) resource(attrs map[string]any) pprofile.ScopeProfiles {
	rp := o.pd.ResourceProfiles().AppendEmpty()
	if err := rp.Resource().Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
	return rp.ScopeProfiles().AppendEmpty()
}

func (o *otlpBuilder) profile(sp pprofile.ScopeProfiles, typ, unit string, start, duration uint64, periodType, periodUnit string, period int64) pprofile.Profile {
	p := sp.Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(o.str(typ))
	p.SampleType().SetUnitStrindex(o.str(unit))
	p.PeriodType().SetTypeStrindex(o.str(periodType))
	p.PeriodType().SetUnitStrindex(o.str(periodUnit))
	p.SetPeriod(period)
	p.SetTime(pcommon.Timestamp(start))
	p.SetDurationNano(duration)
	return p
}

func addSample(p pprofile.Profile, stack int32, attrs []int32, values []int64, timestamps []uint64) {
	s := p.Samples().AppendEmpty()
	s.SetStackIndex(stack)
	s.AttributeIndices().FromRaw(attrs)
	s.Values().FromRaw(values)
	s.TimestampsUnixNano().FromRaw(timestamps)
}

// stackSignature spells out a stack as the frames it stands for (one per
// line, inlined first), so that stacks compare across dictionaries and
// across the one-frame-per-line expansion of the Sentry format.
func stackSignature(dict pprofile.ProfilesDictionary, stack int32) string {
	str := func(i int32) string { return dict.StringTable().At(int(i)) }
	var parts []string
	locs := dict.StackTable().At(int(stack)).LocationIndices()
	for i := range locs.Len() {
		loc := dict.LocationTable().At(int(locs.At(i)))
		mapping := ""
		if m := loc.MappingIndex(); m > 0 {
			mapping = str(dict.MappingTable().At(int(m)).FilenameStrindex())
		}
		if loc.Lines().Len() == 0 {
			parts = append(parts, fmt.Sprintf("%#x@%s", loc.Address(), mapping))
		}
		for _, l := range loc.Lines().All() {
			f := dict.FunctionTable().At(int(l.FunctionIndex()))
			parts = append(parts, fmt.Sprintf("%s(%s:%d:%d)%#x@%s", str(f.NameStrindex()), str(f.FilenameStrindex()), l.Line(), l.Column(), loc.Address(), mapping))
		}
	}
	return strings.Join(parts, ";")
}

// eventsPerStack counts the events of every stack in pd: timestamps, one per
// timestamp (values per timestamp when given), or the aggregated values over
// the period.
func eventsPerStack(pd pprofile.Profiles, perPeriod func(pprofile.Profile, int64) int64) map[string]int64 {
	out := map[string]int64{}
	dict := pd.Dictionary()
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				for _, s := range prof.Samples().All() {
					sig := stackSignature(dict, s.StackIndex())
					ts, vs := s.TimestampsUnixNano(), s.Values()
					switch {
					case ts.Len() > 0 && vs.Len() == ts.Len():
						for _, v := range vs.All() {
							out[sig] += perPeriod(prof, v)
						}
					case ts.Len() > 0:
						out[sig] += int64(ts.Len())
					default:
						for _, v := range vs.All() {
							out[sig] += perPeriod(prof, v)
						}
					}
				}
			}
		}
	}
	return out
}

func countsAsIs(_ pprofile.Profile, v int64) int64 { return v }

// oneSample counts a received timestamp as one event: each is one Sentry
// sample, its value its wall time (the time to the next sample of its
// thread), not a count.
func oneSample(pprofile.Profile, int64) int64 { return 1 }

// backToPdata receives the chunks as a Sentry receiver would.
func backToPdata(t *testing.T, chunks []Chunk) pprofile.Profiles {
	t.Helper()
	items := make([]profilesin.DecodedProfile, 0, len(chunks))
	for _, c := range chunks {
		data := sentry.AppendChunkJSON(nil, c.Profile)
		p, err := sentry.DecodeProfile(data)
		require.NoError(t, err)
		sentry.Normalize(p)
		require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()))
		items = append(items, profilesin.DecodedProfile{Profile: p, Payload: data})
	}
	pd := profilestest.ToProfiles(items, profilesin.ReceiveOptions{})
	translatortest.RequireValidPdata(t, pd)
	return pd
}

const t0 = uint64(1_795_000_000_000_000_000)

func TestFromProfilesAggregatedValues(t *testing.T) {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{"service.name": "billing", "host.name": "node-7", "telemetry.sdk.language": "go"})
	main := o.location(0, 0, "go", testLine{fn: "main.main", file: "/src/main.go", line: 10})
	work := o.location(0, 0, "go", testLine{fn: "main.work", file: "/src/work.go", line: 22})
	hash := o.location(0, 0, "go", testLine{fn: "crypto/sha256.block", file: "/go/src/crypto/sha256/block.go", line: 5})
	sA, sB, sC := o.stack(work, main), o.stack(hash, work, main), o.stack(main)
	p := o.profile(sp, "cpu", "nanoseconds", t0, 10e9, "cpu", "nanoseconds", 10_000_000)
	thread1 := o.attr(string(semconv.ThreadIDKey), int64(1))
	thread2 := o.attr(string(semconv.ThreadIDKey), int64(2))
	name2 := o.attr(string(semconv.ThreadNameKey), "gc worker")
	addSample(p, sA, []int32{thread1}, []int64{30_000_000}, nil)
	addSample(p, sB, []int32{thread1}, []int64{10_000_000, 20_000_000}, nil)
	addSample(p, sC, []int32{thread2, name2}, []int64{25_000_000}, nil)
	addSample(p, sA, nil, []int64{40_000_000}, nil) // no thread: the synthetic one

	chunks, drops := FromProfiles(o.pd, ExportOptions{})
	require.Empty(t, drops)
	require.Len(t, chunks, 1)
	requireValidChunks(t, chunks)
	c := chunks[0].Profile
	assert.Equal(t, "go", c.Platform, "from the frames' profile.frame.type")
	assert.Len(t, c.Samples, 3+3+3+4)

	threads := map[string]int{}
	for _, s := range c.Samples {
		threads[s.ThreadID]++
		assert.GreaterOrEqual(t, s.Timestamp, int64(t0))
		assert.Less(t, s.Timestamp, int64(t0+10e9), "spread inside the profile's time range")
	}
	assert.Equal(t, map[string]int{"1": 6, "2": 3, "0": 4}, threads)
	assert.Equal(t, []sentry.ThreadMetadata{{ThreadID: "2", Name: "gc worker"}}, c.ThreadMetadata)

	back := backToPdata(t, chunks)
	period := func(_ pprofile.Profile, v int64) int64 { return (v + 5_000_000) / 10_000_000 }
	assert.Equal(t, eventsPerStack(o.pd, period), eventsPerStack(back, oneSample))
}

func TestFromProfilesNativeMappings(t *testing.T) {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{"service.name": "edge-proxy"})
	app := o.mapping("/usr/bin/edge-proxy", 0x400000, 0x520000, 0, "b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3")
	libcText := o.mapping("/usr/lib/libc.so.6", 0x7f0000028000, 0x7f00001bd000, 0x28000, "0a1b2c3d")
	libcData := o.mapping("/usr/lib/libc.so.6", 0x7f00001bd000, 0x7f0000215000, 0x1bd000, "0a1b2c3d")
	l1 := o.location(0x401234, app, "native")
	l2 := o.location(0x4ff000, app, "native")
	l3 := o.location(0x7f0000029abc, libcText, "native")
	l4 := o.location(0x7f00001be000, libcData, "native")
	s1, s2 := o.stack(l3, l1, l2), o.stack(l4, l2)
	p := o.profile(sp, "samples", "count", t0, 2e9, "cpu", "nanoseconds", 52_631_578)
	addSample(p, s1, nil, nil, []uint64{t0 + 1e6, t0 + 2e6, t0 + 50e6})
	addSample(p, s2, nil, nil, []uint64{t0 + 3e6, t0 + 9e6})

	chunks, drops := FromProfiles(o.pd, ExportOptions{})
	require.Empty(t, drops)
	require.Len(t, chunks, 1)
	requireValidChunks(t, chunks)
	c := chunks[0].Profile
	assert.Equal(t, "native", c.Platform)
	require.Len(t, c.DebugMeta.Images, 2, "one image per binary, however many segments")
	assert.Equal(t, sentry.Image{
		Type: "elf", CodeFile: "/usr/bin/edge-proxy", CodeID: "b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3",
		DebugID: "e9d0c1b2-a7f8-c5b6-d4e3-f2a1b0c9d8e7", ImageAddr: 0x400000, ImageSize: 0x120000,
	}, c.DebugMeta.Images[0])
	assert.Equal(t, sentry.Image{
		Type: "elf", CodeFile: "/usr/lib/libc.so.6", CodeID: "0a1b2c3d",
		DebugID: "3d2c1b0a-0000-0000-0000-000000000000", ImageAddr: 0x7f0000000000, ImageSize: 0x215000,
	}, c.DebugMeta.Images[1], "loaded at memory_start - file_offset, sized to the last segment")
	for _, f := range c.Frames {
		assert.NotZero(t, f.InstructionAddr)
		assert.Empty(t, f.Platform, "native frames in a native chunk")
	}

	back := backToPdata(t, chunks)
	assert.Equal(t, eventsPerStack(o.pd, countsAsIs), eventsPerStack(back, oneSample))
}

func TestFromProfilesSampleTypes(t *testing.T) {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{"service.name": "api", "telemetry.sdk.language": "python"})
	handler := o.location(0, 0, "", testLine{fn: "handler", file: "app.py", line: 3})
	inlined := o.location(0, 0, "",
		testLine{fn: "inner", file: "app.py", line: 40, col: 2},
		testLine{fn: "outer", file: "app.py", line: 44, col: 9})
	s1, s2 := o.stack(handler), o.stack(inlined, handler)
	id := pprofile.ProfileID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

	// One pprof profile with three sample types arrives as three OTLP
	// profiles sharing id and time: only samples/count is converted.
	for _, typ := range [][2]string{{"alloc_space", "bytes"}, {"cpu", "nanoseconds"}, {"samples", "count"}} {
		p := o.profile(sp, typ[0], typ[1], t0, 1e9, "cpu", "nanoseconds", 10_000_000)
		p.SetProfileID(id)
		switch typ[0] {
		case "samples":
			addSample(p, s1, nil, []int64{3, 1}, []uint64{t0 + 1e6, t0 + 2e6})
			addSample(p, s2, nil, nil, []uint64{t0 + 3e6, t0 + 4e6})
		default:
			addSample(p, s1, nil, []int64{999_000_000}, nil)
		}
	}
	// A memory profile on its own cannot become wall-clock samples.
	mem := o.profile(sp, "inuse_space", "bytes", t0+5e9, 1e9, "space", "bytes", 512*1024)
	addSample(mem, s1, nil, []int64{4096}, nil)

	chunks, drops := FromProfiles(o.pd, ExportOptions{})
	require.Len(t, drops, 1)
	assert.Equal(t, sentry.ReasonInvalidSampledProfile, drops[0].Reason)
	assert.Equal(t, 1, drops[0].Samples)
	assert.ErrorContains(t, drops[0].Err, "inuse_space")

	require.Len(t, chunks, 1)
	requireValidChunks(t, chunks)
	c := chunks[0].Profile
	assert.Equal(t, "python", c.Platform, "from telemetry.sdk.language")
	assert.Equal(t, "0102030405060708090a0b0c0d0e0f10", c.ChunkID, "chunk_id is the profile id")
	assert.Len(t, c.Samples, 3+1+2, "values on timestamps are events")
	require.Len(t, c.Frames, 3)
	assert.Equal(t, []string{"inner", "outer", "handler"}, []string{c.Frames[1].Function, c.Frames[2].Function, c.Frames[0].Function})
	assert.Equal(t, []int64{1, 2, 0}, c.Stacks.At(1), "inlined functions first, as OTLP orders lines")

	back := backToPdata(t, chunks)
	samplesOnly := pprofile.NewProfiles()
	o.pd.CopyTo(samplesOnly)
	samplesOnly.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().RemoveIf(func(p pprofile.Profile) bool {
		return samplesOnly.Dictionary().StringTable().At(int(p.SampleType().TypeStrindex())) != "samples"
	})
	assert.Equal(t, eventsPerStack(samplesOnly, countsAsIs), eventsPerStack(back, oneSample))
}

func TestFromProfilesSeveralProfilesAndLongSpans(t *testing.T) {
	o := newOTLPBuilder()
	attrs := map[string]any{"service.name": "scheduler", "service.instance.id": "i-42", "deployment.environment.name": "prod", "service.version": "7.1.0"}
	sp := o.resource(attrs)
	loop := o.location(0, 0, "jvm", testLine{fn: "Scheduler.loop", file: "Scheduler.java", line: 80})
	s := o.stack(loop)
	thread := o.attr(string(semconv.ThreadIDKey), int64(17))

	short := o.profile(sp, "samples", "count", t0, 1e9, "wall", "nanoseconds", 9_900_990)
	addSample(short, s, []int32{thread}, nil, []uint64{t0, t0 + 1e7, t0 + 2e7})

	// 150 s of samples at 1 Hz, merged with the short profile of the same
	// profiler: more than the 60 s window, cut into equal windows.
	long := o.profile(sp, "samples", "count", t0+1000e9, 151e9, "wall", "nanoseconds", 1e9)
	var ts []uint64
	for i := range uint64(151) {
		ts = append(ts, t0+1000e9+i*1e9)
	}
	addSample(long, s, []int32{thread}, nil, ts)

	chunks, drops := FromProfiles(o.pd, ExportOptions{SDKName: "test.exporter", SDKVersion: "9.9.9", ChunkWindow: 60e9})
	require.Empty(t, drops)
	require.Len(t, chunks, 1+3)
	requireValidChunks(t, chunks)
	ids := map[string]bool{}
	total := 0
	for i, c := range chunks {
		assert.Equal(t, 0, c.ResourceIndex)
		assert.Equal(t, chunks[0].Profile.ProfilerID, c.Profile.ProfilerID, "one source, one profiler_id")
		assert.Equal(t, "java", c.Profile.Platform)
		assert.Equal(t, "7.1.0", c.Profile.Release)
		assert.Equal(t, "prod", c.Profile.Environment)
		assert.Equal(t, sentry.ClientSDK{Name: "test.exporter", Version: "9.9.9"}, c.Profile.ClientSDK)
		assert.False(t, ids[c.Profile.ChunkID], "chunk %d has its own chunk_id", i)
		ids[c.Profile.ChunkID] = true
		first, last := c.Profile.Samples[0].Timestamp, c.Profile.Samples[len(c.Profile.Samples)-1].Timestamp
		assert.LessOrEqual(t, last-first, int64(60e9))
		total += len(c.Profile.Samples)
	}
	assert.Equal(t, 3+151, total)

	// The same source exported again keeps its profiler_id and chunk ids.
	again, _ := FromProfiles(o.pd, ExportOptions{SDKName: "test.exporter", SDKVersion: "9.9.9", ChunkWindow: 60e9})
	assert.Equal(t, chunks, again)
	other := newOTLPBuilder()
	other.resource(attrs)
	assert.Equal(t, chunks[0].Profile.ProfilerID, foreignProfilerID(other.pd.ResourceProfiles().At(0).Resource().Attributes(), ""))

	back := backToPdata(t, chunks)
	assert.Equal(t, eventsPerStack(o.pd, countsAsIs), eventsPerStack(back, oneSample))
}

func TestFromProfilesDropsMalformed(t *testing.T) {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{})
	loc := o.location(0, 0, "", testLine{fn: "f"})
	s := o.stack(loc)
	p := o.profile(sp, "samples", "count", t0, 1e9, "", "", 0)
	addSample(p, s, nil, nil, []uint64{t0, t0 + 1e7, t0 + 2e7})
	addSample(p, 99, nil, nil, []uint64{t0 + 3e7, t0 + 4e7}) // stack out of range
	addSample(p, -1, nil, []int64{5}, nil)                   // negative stack
	bad := o.stack(loc, 1234)                                // location out of range
	addSample(p, bad, nil, nil, []uint64{t0 + 5e7})
	// Another process: its profile is not merged with the first one.
	lonely := o.profile(o.resource(map[string]any{"process.pid": int64(2)}), "samples", "count", t0+10e9, 1e9, "", "", 0)
	addSample(lonely, s, nil, nil, []uint64{t0 + 10e9}) // one sample: Relay keeps nothing

	chunks, drops := FromProfiles(o.pd, ExportOptions{})
	require.Len(t, chunks, 1)
	requireValidChunks(t, chunks)
	assert.Len(t, chunks[0].Profile.Samples, 3)
	assert.Equal(t, "native", chunks[0].Profile.Platform, "the default platform")
	require.Len(t, drops, 2)
	assert.Equal(t, Drop{Reason: sentry.ReasonMalformedStacks, Samples: 2 + 5 + 1, Err: drops[0].Err}, drops[0])
	assert.Equal(t, sentry.ReasonNotEnoughSamples, drops[1].Reason)
	assert.Equal(t, 1, drops[1].Samples)
}

// A stack found invalid only while a chunk is built (where it is first
// walked): its samples are left out of that chunk and counted in the
// group's one malformed Drop; the chunks of other windows stay, once, and a
// window left with no sample makes no chunk and no Drop of its own.
func TestFromProfilesInvalidStackFoundInAChunk(t *testing.T) {
	tests := []struct {
		name           string
		good, bad      []uint64 // sample times, offsets from t0
		chunkSamples   []int
		malformedCount int
	}{
		{"later window keeps its valid samples", []uint64{0, 1e9, 70e9, 71e9}, []uint64{72e9}, []int{2, 2}, 1},
		{"later window of invalid stacks only", []uint64{0, 1e9}, []uint64{70e9, 71e9, 72e9}, []int{2}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOTLPBuilder()
			sp := o.resource(map[string]any{})
			good := o.stack(o.location(0, 0, "", testLine{fn: "f"}))
			badLoc := o.location(0, 0, "", testLine{fn: "g"})
			o.dict.LocationTable().At(int(badLoc)).Lines().At(0).SetFunctionIndex(999) // function out of range
			bad := o.stack(badLoc)
			p := o.profile(sp, "samples", "count", t0, 100e9, "", "", 0)
			at := func(offsets []uint64) []uint64 {
				ts := make([]uint64, len(offsets))
				for i, d := range offsets {
					ts[i] = t0 + d
				}
				return ts
			}
			addSample(p, good, nil, nil, at(tt.good))
			addSample(p, bad, nil, nil, at(tt.bad))

			chunks, drops := FromProfiles(o.pd, ExportOptions{})
			requireValidChunks(t, chunks)
			require.Len(t, chunks, len(tt.chunkSamples))
			for i, n := range tt.chunkSamples {
				assert.Len(t, chunks[i].Profile.Samples, n, "chunk %d", i)
			}
			require.Len(t, drops, 1)
			assert.Equal(t, Drop{Reason: sentry.ReasonMalformedStacks, Samples: tt.malformedCount, Err: drops[0].Err}, drops[0])
		})
	}
}

// An aggregated sample beyond the event limit reaches no chunk: its stack
// is checked when it is counted, so that it is dropped as malformed, not
// as too large.
func TestFromProfilesOverflowWithInvalidStack(t *testing.T) {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{})
	good := o.stack(o.location(0, 0, "", testLine{fn: "f"}))
	bad := o.stack(o.location(0, 0, "", testLine{fn: "g"}), 1234) // location out of range
	p := o.profile(sp, "samples", "count", t0, 1e9, "", "", 0)
	// Eight values of the most one value makes: as many events as one
	// profiler may make, and all but eight of the request's extra events.
	for range maxProfileEvents / maxSampleEvents {
		addSample(p, good, nil, []int64{maxSampleEvents}, nil)
	}
	addSample(p, bad, nil, []int64{5}, nil)

	chunks, drops := FromProfiles(o.pd, ExportOptions{})
	requireValidChunks(t, chunks)
	require.Len(t, chunks, 1)
	assert.Len(t, chunks[0].Profile.Samples, maxProfileEvents)
	require.Len(t, drops, 1)
	assert.Equal(t, Drop{Reason: sentry.ReasonMalformedStacks, Samples: 5, Err: drops[0].Err}, drops[0])
}

// Timestamped samples past the event limit, one event per timestamp or
// several per timestamp: the limit holds, and what it cuts is counted.
func TestFromProfilesEventLimitWithTimestamps(t *testing.T) {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{})
	st := o.stack(o.location(0, 0, "", testLine{fn: "f"}))
	p := o.profile(sp, "samples", "count", t0, 1e9, "", "", 0)
	ts := make([]uint64, maxProfileEvents-3)
	for i := range ts {
		ts[i] = t0 + uint64(i)
	}
	addSample(p, st, nil, nil, ts)                                     // leaves room for 3
	addSample(p, st, nil, []int64{2, 5}, []uint64{t0 + 1e6, t0 + 2e6}) // 7 events: 3 fit
	addSample(p, st, nil, nil, []uint64{t0 + 3e6, t0 + 4e6})           // none fit

	chunks, drops := FromProfiles(o.pd, ExportOptions{})
	requireValidChunks(t, chunks)
	sent := 0
	for _, c := range chunks {
		sent += len(c.Profile.Samples)
	}
	assert.Equal(t, maxProfileEvents, sent)
	require.Len(t, drops, 1)
	assert.Equal(t, sentry.ReasonExceedSizeLimit, drops[0].Reason)
	assert.True(t, drops[0].Partial, "the chunks were sent")
	// A timestamp cut short counts once, however many events it lost.
	assert.Equal(t, 1+2, drops[0].Samples)
}

// randomOTLP makes a profile set with the troubles the exporter must sort
// out: stacks naming locations or functions outside the dictionary, idle
// stacks, aggregated and per-timestamp values, zero and huge timestamps,
// spans of several windows, many threads.
func randomOTLP(rng *rand.Rand) pprofile.Profiles {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{"service.name": "random"})
	var locs []int32
	for i := range 30 {
		switch rng.IntN(12) {
		case 0:
			locs = append(locs, o.location(uint64(0x1000+i), 0, "native"))
		case 1:
			l := o.location(0, 0, "", testLine{fn: fmt.Sprint("bad", i)})
			o.dict.LocationTable().At(int(l)).Lines().At(0).SetFunctionIndex(int32(5000 + i))
			locs = append(locs, l)
		default:
			locs = append(locs, o.location(0, 0, "", testLine{fn: fmt.Sprint("f", i%7), file: "a.py", line: int64(i)}, testLine{fn: "g", line: 2}))
		}
	}
	var stacks []int32
	for range 15 {
		var st []int32
		for range rng.IntN(6) {
			if rng.IntN(40) == 0 {
				st = append(st, int32(900+rng.IntN(10)))
			} else {
				st = append(st, locs[rng.IntN(len(locs))])
			}
		}
		stacks = append(stacks, o.stack(st...))
	}
	var threads []int32
	for i := range 1 + rng.IntN(20) {
		threads = append(threads, o.attr("thread.id", int64(i*7+1)))
	}
	for range 1 + rng.IntN(3) {
		span := []uint64{1e9, 70e9, 200e9}[rng.IntN(3)]
		p := o.profile(sp, "samples", "count", t0, span, "cpu", "nanoseconds", 10_000_000)
		for range 1 + rng.IntN(40) {
			st := stacks[rng.IntN(len(stacks))]
			if rng.IntN(30) == 0 {
				st = int32(rng.IntN(40)) - 5
			}
			attrs := []int32{threads[rng.IntN(len(threads))]}
			var ts []uint64
			var values []int64
			switch rng.IntN(4) {
			case 0: // aggregated
				values = []int64{int64(rng.IntN(5))}
			case 1: // values per timestamp, of one event each as SampleEvents counts them
				for range 1 + rng.IntN(4) {
					ts = append(ts, t0+uint64(rng.Int64N(int64(span))))
					values = append(values, 1)
				}
			default:
				for range 1 + rng.IntN(8) {
					t := t0 + uint64(rng.Int64N(int64(span)))
					if rng.IntN(100) == 0 {
						t = []uint64{0, math.MaxUint64 - 1e12, 1 << 63, math.MaxInt64}[rng.IntN(4)]
					}
					ts = append(ts, t)
				}
			}
			addSample(p, st, attrs, values, ts)
		}
	}
	return o.pd
}

// A sample whose stack, locations or functions are outside the dictionary
// is dropped as malformed, with every event it holds, before it can shape a
// chunk; everything else is sent or counted, and every chunk passes Relay's
// rules. The expected count is worked out here from the dictionary itself.
func TestFromProfilesDropsMalformedStacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 200 {
		pd := randomOTLP(rng)
		chunks, drops := FromProfiles(pd, ExportOptions{})
		requireValidChunks(t, chunks)
		require.Equal(t, samplecount.Events(pd), sentOrDropped(chunks, drops), "case %d: every event is either sent or counted as dropped", i)

		malformed := 0
		for _, d := range drops {
			if d.Reason == sentry.ReasonMalformedStacks {
				malformed += d.Samples
			}
		}
		require.Equal(t, malformedEvents(pd), malformed, "case %d: events of samples with a stack outside the dictionary", i)
	}
}

// malformedEvents counts the events (as SampleEvents does) of the samples
// whose stack, or a location or function it reaches, is not in pd's
// dictionary.
func malformedEvents(pd pprofile.Profiles) int {
	dict := pd.Dictionary()
	stackValid := func(st int32) bool {
		if st < 0 || int(st) >= dict.StackTable().Len() {
			return false
		}
		for _, l := range dict.StackTable().At(int(st)).LocationIndices().All() {
			if l < 0 || int(l) >= dict.LocationTable().Len() {
				return false
			}
			for _, line := range dict.LocationTable().At(int(l)).Lines().All() {
				if f := line.FunctionIndex(); f < 0 || int(f) >= dict.FunctionTable().Len() {
					return false
				}
			}
		}
		return true
	}
	n := 0
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				for _, s := range prof.Samples().All() {
					if !stackValid(s.StackIndex()) {
						n += samplecount.OfSample(s)
					}
				}
			}
		}
	}
	return n
}

// chunkValid vouches for a chunk only when Validate accepts it, and the
// chunks it does not vouch for are the ones Validate rejects.
func TestChunkValidAgreesWithValidate(t *testing.T) {
	valid := func() *sentry.Profile {
		return &sentry.Profile{
			Version:    sentry.VersionV2,
			ProfilerID: "4d229f1d3807421ba62a5f8bc295d836",
			ChunkID:    "0432a0a4c25f4697bf9f0a2fcbe6a814",
			Platform:   "python",
			ClientSDK:  sentry.ClientSDK{Name: DefaultSDKName, Version: "1.0.0"},
			Samples: []sentry.Sample{
				{StackID: 0, ThreadID: "1", Timestamp: int64(t0)},
				{StackID: 1, ThreadID: "2", Timestamp: int64(t0)},
				{StackID: 0, ThreadID: "1", Timestamp: int64(t0 + 1e7)},
			},
			Stacks: sentry.Stacks{FrameIndices: []int64{0}, Offsets: []int{0, 1}}, // [[0], []]
			Frames: []sentry.Frame{{Function: "f"}},
		}
	}
	tests := []struct {
		name   string
		change func(p *sentry.Profile)
		want   sentry.Reason // "" when valid
	}{
		{"valid", func(*sentry.Profile) {}, ""},
		{"no thread with two non-idle samples", func(p *sentry.Profile) { p.Samples[2].ThreadID = "3" }, sentry.ReasonNotEnoughSamples},
		{"zero timestamp", func(p *sentry.Profile) { p.Samples[0].Timestamp = 0 }, sentry.ReasonMalformedSamples},
		{"timestamp past the int64 range", func(p *sentry.Profile) { p.Samples[2].Timestamp = math.MinInt64 }, sentry.ReasonMalformedSamples},
		{"span over 66 s", func(p *sentry.Profile) { p.Samples[2].Timestamp = int64(t0 + 67e9) }, sentry.ReasonDurationIsTooLong},
		{"span of 66 s", func(p *sentry.Profile) { p.Samples[2].Timestamp = int64(t0 + 66e9) }, ""},
		{"no platform", func(p *sentry.Profile) { p.Platform = "" }, sentry.ReasonMissingProfileMetadata},
		{"no SDK version", func(p *sentry.Profile) { p.ClientSDK.Version = "" }, sentry.ReasonMissingProfileMetadata},
		{"chunk id not a UUID", func(p *sentry.Profile) { p.ChunkID = "chunk" }, sentry.ReasonInvalidJSON},
		{"profiler id in capitals", func(p *sentry.Profile) { p.ProfilerID = strings.ToUpper(p.ProfilerID) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid()
			tt.change(p)
			// The events and per-thread counts the builder would have had.
			threads := map[string]int32{}
			var events []exportEvent
			active := make([]int, 3)
			for _, s := range p.Samples {
				if _, ok := threads[s.ThreadID]; !ok {
					threads[s.ThreadID] = int32(len(threads))
				}
				events = append(events, exportEvent{ts: uint64(s.Timestamp), thread: threads[s.ThreadID]})
				if len(p.Stacks.At(int(s.StackID))) > 0 {
					active[threads[s.ThreadID]]++
				}
			}
			slices.SortFunc(events, compareEvents)
			err := sentry.Validate(p, sentry.DefaultLimits())
			if chunkValid(p, events, active) {
				require.NoError(t, err, "vouched for an invalid chunk")
			}
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			var serr *sentry.Error
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, tt.want, serr.Reason)
			assert.False(t, chunkValid(p, events, active))
		})
	}
}

func TestDebugIDFromBuildID(t *testing.T) {
	tests := []struct {
		name, buildID, want string
	}{
		{"20-byte GNU build id", "f1c3bcc0279865fe3058404b2831d9e64135386c", "c0bcc3f1-9827-fe65-3058-404b2831d9e6"},
		{"short id is zero padded", "0a1b2c3d", "3d2c1b0a-0000-0000-0000-000000000000"},
		{"not hex", "xyz", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, debugIDFromBuildID(tt.buildID))
		})
	}
}

func TestSampleEvents(t *testing.T) {
	pd := pprofile.NewProfiles()
	samples := pd.ResourceProfiles().AppendEmpty().ScopeProfiles().AppendEmpty().Profiles().AppendEmpty().Samples()
	samples.AppendEmpty().TimestampsUnixNano().FromRaw([]uint64{1, 2, 3}) // three events
	samples.AppendEmpty().Values().FromRaw([]int64{5})                    // aggregated: five
	withBoth := samples.AppendEmpty()                                     // timestamps win over values
	withBoth.TimestampsUnixNano().FromRaw([]uint64{4})
	withBoth.Values().FromRaw([]int64{9})
	samples.AppendEmpty().Values().FromRaw([]int64{-2}) // a negative value counts nothing
	if got := samplecount.Events(pd); got != 3+5+1 {
		t.Fatalf("SampleEvents = %d, want 9", got)
	}
	if got := samplecount.Events(pprofile.NewProfiles()); got != 0 {
		t.Fatalf("SampleEvents of nothing = %d", got)
	}
}

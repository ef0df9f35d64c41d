package sentry

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendChunkJSONLayout(t *testing.T) {
	p := &Profile{
		Version:     VersionV1,
		ProfilerID:  "4d229f1d3807421ba62a5f8bc295d836",
		ChunkID:     "0432a0a4c25f4697bf9f0a2fcbe6a814",
		Platform:    "cocoa",
		Release:     "0.1 (199)",
		Environment: "<prod & test>",
		Timestamp:   time.Unix(1710805688, 237000000).UTC(),
		ClientSDK:   ClientSDK{Name: "sentry-cocoa", Version: "7.6.1"},
		DebugMeta: DebugMeta{Images: []Image{{
			Type: "macho", DebugID: "32420279-25E2-34E6-8BC7-8A006A8F2425",
			ImageAddr: 0x10258c000, ImageVMAddr: 0x100000000, ImageSize: 1720320,
		}}},
		Measurements: []Measurement{{Name: "cpu", Unit: "hz", Values: []MeasurementValue{{Timestamp: 1234_123000000, Value: 66}, {Timestamp: 1235_000000001, Value: 0.5}}}},
		Samples: []Sample{
			{StackID: 0, ThreadID: "0x0000000102adc700", Timestamp: 1724777211_503779900},
			{StackID: 1, ThreadID: "259", Timestamp: 1724777211_513000000, State: "running"},
		},
		Stacks: stacksOf([]int64{0}, []int64{1, 0}, nil),
		Frames: []Frame{
			{Function: "main", InApp: BoolTrue, Lineno: 42, InstructionAddr: 0xa722447ffffffffc},
			{SymbolAddr: 0x10, Data: `{"a":[1]}`, InApp: BoolFalse},
		},
		ThreadMetadata: []ThreadMetadata{{ThreadID: "259", Name: "main", Priority: 0, HasPriority: true}, {ThreadID: "0x0000000102adc700"}},
	}
	want := `{"version":"2","profiler_id":"4d229f1d3807421ba62a5f8bc295d836","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814",` +
		`"platform":"cocoa","release":"0.1 (199)","environment":"<prod & test>","timestamp":1710805688.237,` +
		`"client_sdk":{"name":"sentry-cocoa","version":"7.6.1"},` +
		`"debug_meta":{"images":[{"type":"macho","debug_id":"32420279-25E2-34E6-8BC7-8A006A8F2425","image_addr":"0x10258c000","image_vmaddr":"0x100000000","image_size":1720320}]},` +
		`"measurements":{"cpu":{"unit":"hz","values":[{"timestamp":1234.123,"value":66},{"timestamp":1235.000000001,"value":0.5}]}},` +
		`"profile":{"samples":[{"stack_id":0,"thread_id":"0x0000000102adc700","timestamp":1724777211.5037799},{"stack_id":1,"thread_id":"259","timestamp":1724777211.513,"state":"running"}],` +
		`"stacks":[[0],[1,0],[]],` +
		`"frames":[{"function":"main","lineno":42,"in_app":true,"instruction_addr":"0xa722447ffffffffc"},{"in_app":false,"symbol_addr":"0x10","data":{"a":[1]}}],` +
		`"thread_metadata":{"259":{"name":"main","priority":0},"0x0000000102adc700":{}}}}`
	got := AppendChunkJSON([]byte("prefix:"), p)
	assert.Equal(t, "prefix:"+want, string(got))
}

func TestAppendChunkJSONEmptyProfile(t *testing.T) {
	got := string(AppendChunkJSON(nil, &Profile{}))
	//nolint:testifylint // byte for byte, not JSONEq: the encoder's output is fixed, key order and empty arrays included
	assert.Equal(t, `{"version":"2","profile":{"samples":[],"stacks":[],"frames":[]}}`, got)
	p, err := DecodeProfile([]byte(got))
	require.NoError(t, err)
	assert.Equal(t, &Profile{Version: VersionV2}, p)
}

func TestAppendChunkJSONTimestamps(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{1724777211503779900, "1724777211.5037799"},
		{1724777211000000000, "1724777211"},
		{1710805788500000000, "1710805788.5"},
		{1, "0.000000001"},
		{999999999, "0.999999999"},
		{-1, "-0.000000001"},
		{-1500000000, "-1.5"},
		{math.MaxInt64, "9223372036.854775807"},
		{math.MinInt64, "-9223372036.854775808"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, string(appendNanos(nil, tt.ns)))
			if tt.ns > math.MinInt64+1e9 && tt.ns < math.MaxInt64-1e9 {
				got, err := sentrytime.ParseSeconds([]byte(tt.want))
				require.NoError(t, err)
				assert.Equal(t, tt.ns, got.UnixNano(), "the text reads back exactly")
			}
		})
	}
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Unix(-2, 500000000), "-1.5"},
		{time.Unix(-2, 0), "-2"},
		{time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), "-62135596799.999999999"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), "253402300799.999999999"},
	} {
		assert.Equal(t, tt.want, string(appendSeconds(nil, tt.t.Unix(), int64(tt.t.Nanosecond()))))
	}
}

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 66, -3, 0.5, 226.66665649414065, 1e-7, 1.5e-7, 1e21, 123456789e20, 13450656, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Copysign(0, -1)} {
		want, err := json.Marshal(f)
		require.NoError(t, err)
		got := appendFloat(nil, f)
		assert.Equal(t, string(want), string(got), "%v formatted like encoding/json", f)
		back, err := strconv.ParseFloat(string(got), 64)
		require.NoError(t, err)
		// Bit for bit: the shortest form must parse back to the same
		// float, the sign of zero included.
		assert.Equal(t, math.Float64bits(f), math.Float64bits(back), "%v round trip", f)
	}
	assert.Equal(t, "null", string(appendFloat(nil, math.NaN())))
	assert.Equal(t, "null", string(appendFloat(nil, math.Inf(-1))))
}

// checkRoundTrip encodes p, checks the output, decodes it and wants p back.
func checkRoundTrip(t *testing.T, p *Profile) {
	t.Helper()
	out := AppendChunkJSON(nil, p)
	require.True(t, json.Valid(out), "output is not valid JSON: %s", out)
	require.NotContains(t, string(out), "\n", "output must fit one envelope line")
	assert.Equal(t, out, AppendChunkJSON(nil, p), "output is not deterministic")
	back, err := DecodeProfile(out)
	require.NoError(t, err, "%s", out)
	want := *p
	want.Version = VersionV2
	canonicalEmpty(&want)
	// The writer writes the fields that have a value; which empty strings
	// the input carried is not part of a chunk.
	want.Present = back.Present
	if !reflect.DeepEqual(&want, back) {
		t.Fatalf("round trip differs: %s\nout: %s", diffProfiles(back, &want), out)
	}
}

func TestAppendChunkJSONRoundTripFixtures(t *testing.T) {
	// 12 of the shared payloads are sample-format profiles and chunks (the
	// others are Android traces); a rename that left fewer would make this
	// loop test almost nothing.
	const minRoundTrips = 10
	tripped := 0
	for name, payload := range profilePayloads(t) {
		t.Run(name, func(t *testing.T) {
			p, err := DecodeProfile(payload)
			if err != nil {
				t.Skipf("not a sample-format profile: %v", err)
			}
			checkRoundTrip(t, p)
			Normalize(p)
			checkRoundTrip(t, p)
			tripped++
		})
	}
	if tripped < minRoundTrips {
		t.Errorf("%d fixtures went round the writer, want at least %d", tripped, minRoundTrips)
	}
}

func TestAppendChunkJSONRoundTripGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 300 {
		checkRoundTrip(t, randomProfile(rng))
		if t.Failed() {
			return
		}
	}
}

// randomProfile builds a profile with every field set to a random value,
// including the extremes of each type.
func randomProfile(rng *rand.Rand) *Profile {
	str := func() string {
		if rng.IntN(4) == 0 {
			return ""
		}
		return genStrings[rng.IntN(len(genStrings))]
	}
	validStr := func() string { return strings.ToValidUTF8(str(), "\uFFFD") }
	u64 := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return math.MaxUint64
		}
		return rng.Uint64() >> rng.IntN(64)
	}
	nanos := func() int64 {
		switch rng.IntN(5) {
		case 0:
			return 0
		case 1:
			return -rng.Int64N(1e18)
		case 2:
			return 9223372035*1e9 + 999999999 // the last second the fast reader takes
		}
		return 1_000_000_000_000_000_000 + rng.Int64N(1e18)
	}
	optBool := func() OptionalBool { return OptionalBool(rng.IntN(3)) }
	p := &Profile{
		Version:     VersionV2,
		EventID:     validStr(),
		ProfilerID:  validStr(),
		ChunkID:     validStr(),
		Platform:    validStr(),
		Release:     validStr(),
		Environment: validStr(),
		Dist:        validStr(),
		Device:      Device{Architecture: validStr(), IsEmulator: optBool(), Locale: validStr(), Manufacturer: validStr(), Model: validStr(), Classification: validStr()},
		OS:          OS{Name: validStr(), Version: validStr(), BuildNumber: validStr()},
		Runtime:     Runtime{Name: validStr(), Version: validStr()},
		ClientSDK:   ClientSDK{Name: validStr(), Version: validStr()},
	}
	if rng.IntN(2) == 0 {
		p.Timestamp = time.Unix(minTimestampSeconds+rng.Int64N(maxTimestampSeconds-minTimestampSeconds), rng.Int64N(1e9)).UTC()
	}
	for range rng.IntN(3) {
		p.DebugMeta.Images = append(p.DebugMeta.Images, Image{
			Type: validStr(), CodeFile: validStr(), CodeID: validStr(), DebugID: validStr(), DebugFile: validStr(),
			UUID: validStr(), Arch: validStr(), ImageAddr: u64(), ImageVMAddr: u64(), ImageSize: u64(),
		})
	}
	for range rng.IntN(3) {
		p.Transactions = append(p.Transactions, Transaction{
			ID: validStr(), Name: validStr(), TraceID: validStr(), SegmentID: validStr(), ActiveThreadID: validStr(),
			RelativeStartNS: u64(), RelativeEndNS: u64(),
		})
	}
	for i := range rng.IntN(3) {
		m := Measurement{Name: "m" + strconv.Itoa(i) + validStr(), Unit: validStr()}
		for range rng.IntN(4) {
			m.Values = append(m.Values, MeasurementValue{
				ElapsedSinceStartNS: u64(), Timestamp: nanos(),
				Value: []float64{0, -1.5, 1e-300, math.MaxFloat64, rng.NormFloat64() * 1e6}[rng.IntN(5)],
			})
		}
		p.Measurements = append(p.Measurements, m)
	}
	nFrames, nStacks := 1+rng.IntN(5), 1+rng.IntN(5)
	for range nFrames {
		f := Frame{
			Function: validStr(), RawFunction: validStr(), Symbol: validStr(), Module: validStr(), Package: validStr(),
			Filename: validStr(), AbsPath: validStr(), Lineno: rng.Uint32(), Colno: rng.Uint32() >> rng.IntN(32),
			InApp: optBool(), Platform: validStr(), InstructionAddr: u64(), SymbolAddr: u64(), ImageAddr: u64(),
			AddrMode: validStr(), Status: validStr(),
		}
		if rng.IntN(2) == 0 {
			f.Data = []string{`{}`, `{"a":[1,2.50e0,null,true],"b":"\u00e9\n"}`, `"raw"`, `[]`, `-0.5`}[rng.IntN(5)]
		}
		p.Frames = append(p.Frames, f)
	}
	for range nStacks {
		var st []int64
		for range rng.IntN(6) {
			st = append(st, []int64{rng.Int64N(int64(nFrames)), -1, math.MaxInt64, math.MinInt64}[rng.IntN(4)])
		}
		p.Stacks.Append(st...)
	}
	for range rng.IntN(50) {
		p.Samples = append(p.Samples, Sample{
			StackID:             []int64{rng.Int64N(int64(nStacks)), -7, math.MinInt64}[rng.IntN(3)],
			ThreadID:            validStr(),
			ElapsedSinceStartNS: u64(),
			Timestamp:           nanos(),
			QueueAddress:        validStr(),
			State:               validStr(),
		})
	}
	seen := map[string]bool{}
	for range rng.IntN(4) {
		tm := ThreadMetadata{ThreadID: validStr(), Name: validStr()}
		if rng.IntN(2) == 0 {
			tm.Priority, tm.HasPriority = rng.Int64N(100)-50, true
		}
		if !seen[tm.ThreadID] {
			seen[tm.ThreadID] = true
			p.ThreadMetadata = append(p.ThreadMetadata, tm)
		}
	}
	seenQueue := map[string]bool{}
	for range rng.IntN(3) {
		qm := QueueMetadata{Address: validStr(), Label: validStr()}
		if !seenQueue[qm.Address] {
			seenQueue[qm.Address] = true
			p.QueueMetadata = append(p.QueueMetadata, qm)
		}
	}
	canonicalEmpty(p)
	return p
}

// BenchmarkAppendChunkJSON encodes the decoded 5 MB chunk.
func BenchmarkAppendChunkJSON(b *testing.B) {
	p, err := DecodeProfile(largeChunk(48000, 5000, 2000))
	if err != nil {
		b.Fatal(err)
	}
	buf := AppendChunkJSON(nil, p)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendChunkJSON(buf[:0], p)
	}
	if !bytes.HasSuffix(buf, []byte("}}")) {
		b.Fatal("truncated output")
	}
}

func TestIndexText(t *testing.T) {
	tests := []struct {
		name  string
		table int // indices with their text in the table
		v     int64
	}{
		{"zero", 10, 0},
		{"one digit", 10, 9},
		{"two digits", 100, 10},
		{"the last in the table", 1000, 999},
		{"past the table", 1000, 1000},
		{"the largest the table holds", maxIndexText, maxIndexText - 1},
		{"negative", 10, -1},
		{"largest", 10, math.MaxInt64},
		{"smallest", 10, math.MinInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := newIndexText(tt.table)
			want := strconv.FormatInt(tt.v, 10)
			assert.Equal(t, "x"+want, string(text.append([]byte("x"), tt.v)))
			assert.Equal(t, "x"+want+",1,"+want, string(text.appendList([]byte("x"), []int64{tt.v, 1, tt.v})))
		})
	}
	// Every entry of a table, written back to back.
	text := newIndexText(123_456)
	var want []string
	var list []int64
	for v := range int64(123_456) {
		want = append(want, strconv.FormatInt(v, 10))
		list = append(list, v)
	}
	assert.Equal(t, strings.Join(want, ","), string(text.appendList(nil, list)))
	assert.Empty(t, text.appendList(nil, nil))
}

func TestTimestampText(t *testing.T) {
	var c timestampText
	for _, ns := range []int64{
		1724777211503779900, 1724777211503779900, // repeated
		1724777211513000000, // same second
		1724777212000000000, // next second, no fraction
		-1500000000, 1,      // negative, then back
		1, 999999999, math.MaxInt64, math.MinInt64,
	} {
		assert.Equal(t, `,"timestamp":`+string(appendNanos(nil, ns)), string(c.get(ns)), "%d", ns)
	}
}

func TestThreadIDTexts(t *testing.T) {
	ids := []string{"259", "0x0000000102adc700", `quote " and \`, "bad \xff"}
	for i := range 2 * threadScanMax {
		ids = append(ids, strconv.Itoa(140195255602048+i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var c threadIDTexts
	for round := range 5 {
		order := slices.Clone(ids)
		if round > 2 {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for _, id := range order {
			want, _ := json.Marshal(id)
			assert.Equal(t, `,"thread_id":`+string(want), string(c.get(id)))
		}
	}
}

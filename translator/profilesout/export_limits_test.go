package profilesout

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// allocatedBy is the number of bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hugeNameProfiles is one stack of n locations, each with its own function
// whose name and system name are the same 1 MiB string, sampled 4 times:
// about 1 MiB of request that, written frame by frame, is 2n MiB of JSON.
func hugeNameProfiles(n int) pprofile.Profiles {
	o := newOTLPBuilder()
	sp := o.resource(map[string]any{"service.name": "hostile"})
	name := o.str(strings.Repeat("é", 1<<19)) // 1 MiB, 2-byte characters
	locs := make([]int32, n)
	for i := range n {
		fn := o.dict.FunctionTable().AppendEmpty()
		fn.SetNameStrindex(name)
		fn.SetSystemNameStrindex(name)
		loc := o.dict.LocationTable().AppendEmpty()
		loc.Lines().AppendEmpty().SetFunctionIndex(int32(o.dict.FunctionTable().Len() - 1))
		locs[i] = int32(o.dict.LocationTable().Len() - 1)
	}
	st := o.stack(locs...)
	p := o.profile(sp, "samples", "count", t0, 1e9, "", "", 0)
	addSample(p, st, nil, nil, []uint64{t0, t0 + 1e7, t0 + 2e7, t0 + 3e7})
	return o.pd
}

// TestFromProfilesHugeStrings: a frame's strings are cut to Relay's 256
// characters before the chunk is written, so one long string named by
// many functions costs what their frames cost, not its length each time.
func TestFromProfilesHugeStrings(t *testing.T) {
	const functions = 64
	pd := hugeNameProfiles(functions)
	var chunks []Chunk
	var drops []Drop
	var size int
	alloc := allocatedBy(func() {
		chunks, drops = FromProfiles(pd, ExportOptions{})
		for _, c := range chunks {
			size += len(sentry.AppendChunkJSON(nil, c.Profile))
		}
	})
	require.Empty(t, drops)
	require.Len(t, chunks, 1)
	requireValidChunks(t, chunks)
	frames := chunks[0].Profile.Frames
	require.Len(t, frames, functions)
	for _, f := range frames {
		assert.Equal(t, maxFrameSymbolChars, utf8.RuneCountInString(f.Function))
		assert.True(t, strings.HasSuffix(f.Function, "..."), "a cut string ends as Relay ends it")
		assert.Equal(t, f.Function, f.Symbol)
	}
	// 64 frames of two 256-character strings: about 66 KiB, not 128 MiB.
	assert.Less(t, size, 128<<10, "chunk JSON bytes")
	assert.Less(t, alloc, uint64(16<<20), "bytes allocated to convert and write")
}

// TestFromProfilesRequestEventBudget: aggregated samples of absurd values
// in many resources (a 10 KiB request) make at most maxSampleEvents
// events each and share one budget of extra events for the request; each
// value cut short counts as one dropped sample, not as the billions it
// claims.
func TestFromProfilesRequestEventBudget(t *testing.T) {
	const resources = 16
	o := newOTLPBuilder()
	st := o.stack(o.location(0, 0, "", testLine{fn: "f"}))
	for i := range resources {
		sp := o.resource(map[string]any{"service.name": "svc", "process.pid": int64(1000 + i)})
		p := o.profile(sp, "samples", "count", t0, 60e9, "", "", 0)
		addSample(p, st, nil, []int64{1 << 62}, nil)
	}

	var chunks []Chunk
	var drops []Drop
	alloc := allocatedBy(func() { chunks, drops = FromProfiles(o.pd, ExportOptions{}) })
	requireValidChunks(t, chunks)
	events := 0
	for _, c := range chunks {
		events += len(c.Profile.Samples)
	}
	assert.LessOrEqual(t, events, maxRequestExtraEvents+resources, "events of the whole request")
	assert.Positive(t, events)
	cut := 0
	for _, d := range drops {
		if d.Reason == sentry.ReasonExceedSizeLimit {
			assert.True(t, d.Partial)
			cut += d.Samples
		}
	}
	assert.Equal(t, resources, cut, "each value cut short counts once")
	assert.Less(t, alloc, uint64(256<<20), "bytes allocated to convert")
}

// TestFromProfilesChunkAndRequestBytes: a chunk whose JSON would pass
// MaxChunkBytes is dropped before it is finished; once the request's
// chunks reach MaxRequestBytes, the rest are dropped without being built;
// every chunk made is within both, and SizeBound bounds its JSON.
func TestFromProfilesChunkAndRequestBytes(t *testing.T) {
	o := newOTLPBuilder()
	// One big stack (about 300 KiB of frames) and a small one.
	big := make([]int32, 1000)
	for i := range big {
		big[i] = o.location(0, 0, "", testLine{fn: strings.Repeat("f", 200) + string(rune('a'+i%26)) + strings.Repeat("x", i%7), file: "big.go"})
	}
	bigStack := o.stack(big...)
	small := o.stack(o.location(0, 0, "", testLine{fn: "main", file: "main.go"}))
	ts := []uint64{t0, t0 + 1e7, t0 + 2e7}
	add := func(pid int, st int32) {
		sp := o.resource(map[string]any{"service.name": "svc", "process.pid": int64(pid)})
		addSample(o.profile(sp, "samples", "count", t0, 1e9, "", "", 0), st, nil, nil, ts)
	}
	add(1, bigStack)
	for pid := 2; pid < 40; pid++ {
		add(pid, small)
	}

	tests := []struct {
		name                 string
		chunkBytes, reqBytes int64
		wantChunks           int
		wantDropped          int // samples dropped as too large
	}{
		{"defaults: all pass", 0, 0, 39, 0},
		{"the big chunk passes the chunk limit", 64 << 10, 0, 38, 3},
		{"the request limit stops the rest", 64 << 10, 128 << 10, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks, drops := FromProfiles(o.pd, ExportOptions{MaxChunkBytes: tt.chunkBytes, MaxRequestBytes: tt.reqBytes})
			requireValidChunks(t, chunks)
			var total int64
			for _, c := range chunks {
				assert.LessOrEqual(t, c.SizeBound, cmpOr(tt.chunkBytes, profileschema.MaxProfileItemBytes))
				total += c.SizeBound
			}
			assert.LessOrEqual(t, total, cmpOr(tt.reqBytes, DefaultMaxRequestChunkBytes))
			dropped := 0
			for _, d := range drops {
				require.Equal(t, sentry.ReasonExceedSizeLimit, d.Reason, "%v", d.Err)
				assert.False(t, d.Partial)
				dropped += d.Samples
			}
			if tt.wantChunks >= 0 {
				assert.Len(t, chunks, tt.wantChunks)
				assert.Equal(t, tt.wantDropped, dropped)
				return
			}
			// The request limit: some chunks made, every other one counted.
			assert.NotEmpty(t, chunks)
			assert.Less(t, len(chunks), 38)
			assert.Equal(t, 3+3*(38-len(chunks)), dropped)
		})
	}
}

func cmpOr(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

func TestTruncateChars(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"short", "main", 8, "main"},
		{"exactly the limit", "abcdefgh", 8, "abcdefgh"},
		{"cut", "abcdefghi", 8, "abcde..."},
		{"multi-byte within the limit", "ééééé", 8, "ééééé"},
		{"multi-byte cut", strings.Repeat("é", 9), 8, "ééééé..."},
		{"invalid bytes count as characters", strings.Repeat("\xff", 9), 8, "\xff\xff\xff\xff\xff..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, truncateChars(tt.in, tt.limit))
		})
	}
}

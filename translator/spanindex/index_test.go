package spanindex

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// sp builds a span of trace 1 with a one-byte span id; times are in
// nanoseconds after base.
func sp(id, segment byte, profiler, thread string, start, end uint64) Span {
	s := Span{
		TraceID:    pcommon.TraceID{1},
		SpanID:     pcommon.SpanID{id},
		ProfilerID: profiler,
		ThreadID:   thread,
		Start:      base + start,
		End:        base + end,
	}
	if segment != 0 {
		s.SegmentID = pcommon.SpanID{segment}
	}
	return s
}

const base = uint64(1_795_000_000_000_000_000)

type probe struct {
	thread string
	at     uint64 // after base
	want   byte   // span id; 0 = no span
}

func TestTimelineInnermostSpan(t *testing.T) {
	tests := []struct {
		name   string
		adds   [][]Span // one Add per element, in arrival order
		probes []probe
	}{
		{
			name: "nested spans: the innermost wins, the edges are half-open",
			adds: [][]Span{{
				sp(1, 1, "p", "0", 0, 100),
				sp(2, 1, "p", "0", 10, 50),
				sp(3, 1, "p", "0", 20, 30),
			}},
			probes: []probe{
				{"0", 0, 1}, {"0", 9, 1}, {"0", 10, 2}, {"0", 20, 3}, {"0", 29, 3},
				{"0", 30, 2}, {"0", 49, 2}, {"0", 50, 1}, {"0", 99, 1}, {"0", 100, 0},
			},
		},
		{
			name: "children without a thread run on their segment's thread",
			adds: [][]Span{{
				sp(1, 1, "p", "7", 0, 100),
				sp(2, 1, "p", "", 10, 50),
			}},
			probes: []probe{{"7", 20, 2}, {"8", 20, 0}, {"7", 60, 1}},
		},
		{
			name: "a segment without a thread covers every thread",
			adds: [][]Span{{
				sp(1, 1, "p", "", 0, 100),
				sp(2, 1, "p", "3", 10, 50),
			}},
			probes: []probe{{"3", 20, 2}, {"4", 20, 1}, {"0", 99, 1}},
		},
		{
			name: "spans of other threads do not apply",
			adds: [][]Span{{
				sp(1, 1, "p", "1", 0, 100),
				sp(2, 2, "p", "2", 0, 100),
			}},
			probes: []probe{{"1", 50, 1}, {"2", 50, 2}, {"3", 50, 0}},
		},
		{
			name: "overlapping transactions on one thread: the later start is inner",
			adds: [][]Span{
				{sp(1, 1, "p", "0", 0, 60)},
				{sp(2, 2, "p", "0", 40, 100)},
			},
			probes: []probe{{"0", 39, 1}, {"0", 40, 2}, {"0", 59, 2}, {"0", 60, 2}, {"0", 99, 2}},
		},
		{
			name: "streamed children before their segment wait for it",
			adds: [][]Span{
				{sp(2, 1, "", "", 10, 50), sp(3, 1, "", "", 20, 30)},
				{sp(1, 1, "p", "0", 0, 100)},
			},
			probes: []probe{{"0", 5, 1}, {"0", 15, 2}, {"0", 25, 3}},
		},
		{
			name: "a container lists the segment after its children",
			adds: [][]Span{
				{sp(2, 1, "", "", 10, 50), sp(1, 1, "p", "0", 0, 100)},
			},
			probes: []probe{{"0", 15, 2}, {"0", 60, 1}},
		},
		{
			name: "children after their segment",
			adds: [][]Span{
				{sp(1, 1, "p", "0", 0, 100)},
				{sp(2, 1, "", "", 10, 50)},
			},
			probes: []probe{{"0", 15, 2}, {"0", 60, 1}},
		},
		{
			name: "equal starts: the one that ends first is inner",
			adds: [][]Span{{
				sp(1, 1, "p", "0", 0, 100),
				sp(2, 1, "p", "0", 0, 40),
			}},
			probes: []probe{{"0", 0, 2}, {"0", 39, 2}, {"0", 40, 1}},
		},
		{
			name: "gaps between siblings fall back to the parent",
			adds: [][]Span{{
				sp(1, 1, "p", "0", 0, 100),
				sp(2, 1, "p", "0", 10, 20),
				sp(3, 1, "p", "0", 30, 40),
			}},
			probes: []probe{{"0", 25, 1}, {"0", 35, 3}, {"0", 45, 1}},
		},
		{
			name:   "spans without a time range are not kept",
			adds:   [][]Span{{sp(1, 1, "p", "0", 50, 50), sp(2, 1, "p", "0", 60, 10)}},
			probes: []probe{{"0", 50, 0}, {"0", 30, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := New(Limits{})
			for i, spans := range tt.adds {
				x.Add(t0.Add(time.Duration(i)*time.Millisecond), spans)
			}
			tl := x.Timeline(t0.Add(time.Second), "p", base, base+1000)
			for _, pr := range tt.probes {
				_, span, ok := tl.SpanAt(pr.thread, base+pr.at)
				if pr.want == 0 {
					assert.False(t, ok, "thread %s at %d: want no span, got %v", pr.thread, pr.at, span)
					continue
				}
				if assert.True(t, ok, "thread %s at %d: want span %d, got none", pr.thread, pr.at, pr.want) {
					assert.Equal(t, pcommon.SpanID{pr.want}, span, "thread %s at %d", pr.thread, pr.at)
				}
			}
		})
	}
}

func TestTimelineIsPerProfilerAndRange(t *testing.T) {
	x := New(Limits{})
	x.Add(t0, []Span{sp(1, 1, "a", "0", 0, 100), sp(2, 2, "b", "0", 0, 100), sp(3, 3, "a", "0", 500, 600)})
	assert.Nil(t, x.Timeline(t0, "c", base, base+1000), "unknown profiler")
	tl := x.Timeline(t0, "a", base+200, base+300)
	assert.Nil(t, tl, "no span of a overlaps [200, 300]")
	tl = x.Timeline(t0, "a", base+50, base+550)
	_, span, ok := tl.SpanAt("0", base+60)
	require.True(t, ok)
	assert.Equal(t, pcommon.SpanID{1}, span)
	_, span, _ = tl.SpanAt("0", base+550)
	assert.Equal(t, pcommon.SpanID{3}, span)
}

func TestIndexExpiry(t *testing.T) {
	x := New(Limits{TTL: time.Minute})
	x.Add(t0, []Span{sp(1, 1, "p", "0", 0, 100)})
	x.Add(t0.Add(30*time.Second), []Span{sp(2, 2, "p", "0", 200, 300), sp(9, 8, "", "", 0, 10)})
	assert.Equal(t, Stats{Spans: 2, Pending: 1}, x.Stats())

	// 61 s after the first span: it and the orphan child of the second add
	// are still young enough... only the first span expired.
	tl := x.Timeline(t0.Add(61*time.Second), "p", base, base+1000)
	_, _, ok := tl.SpanAt("0", base+50)
	assert.False(t, ok, "the first span expired")
	_, _, ok = tl.SpanAt("0", base+250)
	assert.True(t, ok, "the second span has not")
	assert.Equal(t, 1, x.Stats().Spans)

	assert.Nil(t, x.Timeline(t0.Add(2*time.Minute), "p", base, base+1000))
	st := x.Stats()
	assert.Equal(t, 0, st.Spans)
	assert.Equal(t, 0, st.Pending, "a child whose segment never came expires too")
	assert.Equal(t, 1, st.Rejected)
}

func TestIndexCaps(t *testing.T) {
	t.Run("spans per profiler: the oldest go", func(t *testing.T) {
		x := New(Limits{MaxSpansPerProfiler: 80})
		for i := range 200 {
			s := sp(1, 1, "p", "0", uint64(i)*10, uint64(i)*10+5)
			s.SpanID = pcommon.SpanID{byte(i), byte(i >> 8), 1}
			x.Add(t0, []Span{s})
		}
		st := x.Stats()
		assert.LessOrEqual(t, st.Spans, 80)
		assert.Equal(t, 200, st.Spans+st.Evicted)
		tl := x.Timeline(t0, "p", base, base+2000)
		_, _, ok := tl.SpanAt("0", base+1)
		assert.False(t, ok, "the first span was evicted")
		_, span, ok := tl.SpanAt("0", base+1991)
		require.True(t, ok, "the last span is kept")
		assert.Equal(t, pcommon.SpanID{199, 0, 1}, span)
	})
	t.Run("profilers: the least recently seen go", func(t *testing.T) {
		x := New(Limits{MaxProfilers: 16})
		for i := range 40 {
			x.Add(t0.Add(time.Duration(i)*time.Millisecond), []Span{sp(1, 1, fmt.Sprint("p", i), "0", 0, 10)})
		}
		st := x.Stats()
		assert.LessOrEqual(t, st.Spans, 16)
		assert.Equal(t, 40, st.Spans+st.Evicted)
		assert.Nil(t, x.Timeline(t0, "p0", base, base+10), "the first profiler was evicted")
		assert.NotNil(t, x.Timeline(t0, "p39", base, base+10), "the last is kept")
	})
	t.Run("pending children: the oldest waiting go first", func(t *testing.T) {
		x := New(Limits{MaxPending: 10})
		for i := range 25 {
			// Each child waits for a segment of its own.
			x.Add(t0.Add(time.Duration(i)*time.Millisecond), []Span{sp(byte(i+2), byte(100+i), "", "", 0, 10)})
		}
		st := x.Stats()
		assert.LessOrEqual(t, st.Pending, 10)
		assert.Equal(t, 25, st.Pending+st.Rejected)
		// The newest child is still there when its segment comes.
		x.Add(t0.Add(time.Second), []Span{sp(124, 124, "p", "0", 0, 100)})
		tl := x.Timeline(t0.Add(time.Second), "p", base, base+100)
		_, span, ok := tl.SpanAt("0", base+5)
		require.True(t, ok)
		assert.Equal(t, pcommon.SpanID{26}, span, "the child, inside its segment")
	})
}

// TestIndexSkipsUnprofiled: spans of a segment without a profiler link to
// nothing and are not kept, nor are the children that waited for it.
func TestIndexSkipsUnprofiled(t *testing.T) {
	x := New(Limits{})
	// A transaction without profiling: root and child in one item.
	x.Add(t0, []Span{sp(1, 1, "", "0", 0, 100), sp(2, 1, "", "", 10, 20)})
	assert.Equal(t, Stats{}, x.Stats())
	// Streamed: the child first, then its segment without a profiler.
	x.Add(t0, []Span{sp(4, 3, "", "", 10, 20)})
	assert.Equal(t, 1, x.Stats().Pending)
	x.Add(t0, []Span{sp(3, 3, "", "0", 0, 100)})
	assert.Equal(t, Stats{Rejected: 1}, x.Stats())
}

// TestIndexHostile: 10^5 spans for one profiler, nested and with absurd
// time ranges, stay within the caps and a chunk's lookups stay fast.
func TestIndexHostile(t *testing.T) {
	x := New(Limits{})
	const n = 100_000
	spans := make([]Span, 0, 1000)
	for i := range n {
		s := sp(1, 1, "p", "0", uint64(i%1000)*1000, uint64(i%1000)*1000+uint64(i%7)*1000)
		s.SpanID = pcommon.SpanID{byte(i), byte(i >> 8), byte(i >> 16), 1}
		switch i % 10 {
		case 0: // from the epoch to the end of time
			s.Start, s.End = 0, ^uint64(0)
		case 1: // ends before it starts
			s.Start, s.End = s.End+1, s.Start
		}
		spans = append(spans, s)
		if len(spans) == cap(spans) {
			x.Add(t0, spans)
			spans = spans[:0]
		}
	}
	st := x.Stats()
	assert.LessOrEqual(t, st.Spans, DefaultLimits().MaxSpansPerProfiler)

	start := time.Now()
	tl := x.Timeline(t0, "p", base, base+1_000_000)
	linked := 0
	for ts := uint64(0); ts < 1_000_000; ts += 100 { // 10^4 samples
		if _, _, ok := tl.SpanAt("0", base+ts); ok {
			linked++
		}
	}
	elapsed := time.Since(start)
	assert.Equal(t, 10_000, linked, "the epoch-long spans cover every sample")
	// Generous: the point is that it is not quadratic (that would take minutes).
	assert.Less(t, elapsed, 10*time.Second)
	t.Logf("timeline of %d spans and 10^4 lookups: %v", st.Spans, elapsed)
}

// TestIndexChildNamesItsProfiler: a span that names its own profiler is
// kept even when its segment names none (sentry-python 3 starts a root
// before its profiler and names the profiler only on the spans after).
func TestIndexChildNamesItsProfiler(t *testing.T) {
	x := New(Limits{TTL: time.Minute, MaxSpans: 100, MaxSpansPerProfiler: 100, MaxProfilers: 10, MaxPending: 10})
	now := time.Unix(1795000000, 0)
	root := pcommon.SpanID{1}
	x.Add(now, []Span{
		{TraceID: pcommon.TraceID{9}, SpanID: root, SegmentID: root, ThreadID: "1", Start: 100, End: 400},
		{TraceID: pcommon.TraceID{9}, SpanID: pcommon.SpanID{2}, SegmentID: root, ProfilerID: "p", ThreadID: "1", Start: 150, End: 250},
		{TraceID: pcommon.TraceID{9}, SpanID: pcommon.SpanID{3}, SegmentID: root, ThreadID: "1", Start: 300, End: 350},
	})
	tl := x.Timeline(now, "p", 100, 400)
	require.NotNil(t, tl)
	_, span, ok := tl.SpanAt("1", 200)
	require.True(t, ok)
	assert.Equal(t, pcommon.SpanID{2}, span)
	_, _, ok = tl.SpanAt("1", 320)
	assert.False(t, ok, "the sibling that names no profiler is not kept")
	assert.Equal(t, 1, x.Stats().Spans)
}

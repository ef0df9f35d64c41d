package spanindex

import (
	"cmp"
	"container/heap"
	"slices"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Timeline answers, for one chunk, which span was the innermost one active
// on a thread at a time. Each thread's spans are flattened once into
// disjoint intervals, each naming its innermost span, so a lookup is a
// binary search whatever the nesting or the number of spans. It is not safe
// for concurrent use.
type Timeline struct {
	// spans overlap the chunk; those without a thread apply to every
	// thread.
	spans    []Span
	byThread map[string][]interval
	// The thread of the last lookup, its intervals and the one found:
	// consecutive samples are mostly of one thread, in time order.
	haveLast  bool
	lastTID   string
	lastIvals []interval
	lastHit   int
}

// interval is [start, end) during which span is the innermost one.
type interval struct {
	start, end uint64
	span       int32 // index in Timeline.spans
}

func newTimeline(spans []Span) *Timeline {
	return &Timeline{spans: spans, byThread: make(map[string][]interval)}
}

// SpanAt returns the trace and span ids of the innermost span active on
// thread at ts (Unix nanoseconds): of the spans covering ts, the one that
// started last, and of those the one that ends first.
func (t *Timeline) SpanAt(thread string, ts uint64) (pcommon.TraceID, pcommon.SpanID, bool) {
	if t == nil {
		return pcommon.TraceID{}, pcommon.SpanID{}, false
	}
	ivals := t.intervals(thread)
	i := t.intervalAt(ivals, ts)
	if i < 0 {
		return pcommon.TraceID{}, pcommon.SpanID{}, false
	}
	t.lastHit = i
	s := &t.spans[ivals[i].span]
	return s.TraceID, s.SpanID, true
}

// intervals are thread's intervals, flattened on first use; the last
// thread asked is kept at hand, as a chunk's samples come thread by
// thread.
func (t *Timeline) intervals(thread string) []interval {
	if t.haveLast && thread == t.lastTID {
		return t.lastIvals
	}
	ivals, ok := t.byThread[thread]
	if !ok {
		ivals = t.flatten(thread)
		t.byThread[thread] = ivals
	}
	t.haveLast, t.lastTID, t.lastIvals, t.lastHit = true, thread, ivals, -1
	return ivals
}

// intervalAt is the index of the interval of ivals holding ts, -1 for
// none. Samples of a thread come in time order: it tries the last
// interval and the next before searching.
func (t *Timeline) intervalAt(ivals []interval, ts uint64) int {
	for _, c := range [...]int{t.lastHit, t.lastHit + 1} {
		if c >= 0 && c < len(ivals) && ivals[c].holds(ts) {
			return c
		}
	}
	i := sort.Search(len(ivals), func(k int) bool { return ivals[k].start > ts }) - 1
	if i < 0 || ts >= ivals[i].end {
		return -1
	}
	return i
}

// holds reports whether ts is in [start, end).
func (v interval) holds(ts uint64) bool { return v.start <= ts && ts < v.end }

// flatten turns the spans of one thread (and the thread-less ones) into
// disjoint intervals of their innermost span: a sweep over the span
// boundaries with the active spans in a heap ordered innermost first.
func (t *Timeline) flatten(thread string) []interval {
	mine := t.spansOf(thread)
	if len(mine) == 0 {
		return nil
	}
	bounds := make([]uint64, 0, 2*len(mine))
	for _, i := range mine {
		bounds = append(bounds, t.spans[i].Start, t.spans[i].End)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)

	active := &innermostFirst{spans: t.spans}
	var out []interval
	next := 0
	for k, b := range bounds[:len(bounds)-1] {
		next = t.activate(active, mine, next, b)
		if active.Len() == 0 {
			continue
		}
		out = appendInterval(out, interval{start: b, end: bounds[k+1], span: active.ids[0]})
	}
	return out
}

// spansOf are the indices of the spans of thread and of the thread-less
// ones, by start.
func (t *Timeline) spansOf(thread string) []int32 {
	var mine []int32
	for i := range t.spans {
		if tid := t.spans[i].ThreadID; tid == thread || tid == "" {
			mine = append(mine, int32(i))
		}
	}
	slices.SortFunc(mine, func(a, b int32) int { return cmp.Compare(t.spans[a].Start, t.spans[b].Start) })
	return mine
}

// activate moves the spans of mine from next on that start by b into
// active, and drops the ones that ended by b; it returns the new next.
func (t *Timeline) activate(active *innermostFirst, mine []int32, next int, b uint64) int {
	for next < len(mine) && t.spans[mine[next]].Start <= b {
		heap.Push(active, mine[next])
		next++
	}
	for active.Len() > 0 && t.spans[active.ids[0]].End <= b {
		heap.Pop(active)
	}
	return next
}

// appendInterval appends iv, extending the last interval instead when it
// is of the same span and ends where iv starts.
func appendInterval(out []interval, iv interval) []interval {
	if n := len(out); n > 0 && out[n-1].span == iv.span && out[n-1].end == iv.start {
		out[n-1].end = iv.end
		return out
	}
	return append(out, iv)
}

// innermostFirst is a heap of span indices: the latest start first, then
// the earliest end, then the later in the index (the later report).
type innermostFirst struct {
	spans []Span
	ids   []int32
}

func (h *innermostFirst) Len() int { return len(h.ids) }
func (h *innermostFirst) Less(i, j int) bool {
	a, b := &h.spans[h.ids[i]], &h.spans[h.ids[j]]
	if a.Start != b.Start {
		return a.Start > b.Start
	}
	if a.End != b.End {
		return a.End < b.End
	}
	return h.ids[i] > h.ids[j]
}
func (h *innermostFirst) Swap(i, j int) { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *innermostFirst) Push(x any)    { h.ids = append(h.ids, x.(int32)) }
func (h *innermostFirst) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}

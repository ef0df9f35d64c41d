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
	ivals := t.lastIvals
	if !t.haveLast || thread != t.lastTID {
		var ok bool
		if ivals, ok = t.byThread[thread]; !ok {
			ivals = t.flatten(thread)
			t.byThread[thread] = ivals
		}
		t.haveLast, t.lastTID, t.lastIvals, t.lastHit = true, thread, ivals, -1
	}
	// Samples of a thread come in time order: try the last interval and
	// the next before searching.
	i := -1
	for _, c := range [...]int{t.lastHit, t.lastHit + 1} {
		if c >= 0 && c < len(ivals) && ivals[c].start <= ts && ts < ivals[c].end {
			i = c
			break
		}
	}
	if i < 0 {
		i = sort.Search(len(ivals), func(k int) bool { return ivals[k].start > ts }) - 1
		if i < 0 || ts >= ivals[i].end {
			return pcommon.TraceID{}, pcommon.SpanID{}, false
		}
	}
	t.lastHit = i
	s := &t.spans[ivals[i].span]
	return s.TraceID, s.SpanID, true
}

// flatten turns the spans of one thread (and the thread-less ones) into
// disjoint intervals of their innermost span: a sweep over the span
// boundaries with the active spans in a heap ordered innermost first.
func (t *Timeline) flatten(thread string) []interval {
	var mine []int32
	for i := range t.spans {
		if tid := t.spans[i].ThreadID; tid == thread || tid == "" {
			mine = append(mine, int32(i))
		}
	}
	if len(mine) == 0 {
		return nil
	}
	slices.SortFunc(mine, func(a, b int32) int { return cmp.Compare(t.spans[a].Start, t.spans[b].Start) })
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
		for next < len(mine) && t.spans[mine[next]].Start <= b {
			heap.Push(active, mine[next])
			next++
		}
		for active.Len() > 0 && t.spans[active.ids[0]].End <= b {
			heap.Pop(active)
		}
		if active.Len() == 0 {
			continue
		}
		top := active.ids[0]
		end := bounds[k+1]
		if n := len(out); n > 0 && out[n-1].span == top && out[n-1].end == b {
			out[n-1].end = end
			continue
		}
		out = append(out, interval{start: b, end: end, span: top})
	}
	return out
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

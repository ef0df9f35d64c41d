package profilesout

import (
	"cmp"
	"math/bits"
	"slices"
)

// eventBefore is the order of a chunk's samples: by time, then thread,
// then pprofile Sample. Small enough to inline into the sorting loops.
func eventBefore(a, b *exportEvent) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	return uint64(uint32(a.thread))<<32|uint64(uint32(a.sample)) < uint64(uint32(b.thread))<<32|uint64(uint32(b.sample))
}

func compareEvents(a, b exportEvent) int {
	switch {
	case eventBefore(&a, &b):
		return -1
	case eventBefore(&b, &a):
		return 1
	}
	return 0
}

// Bucket sort tuning: about eventsPerBucket events share a bucket, and a
// bucket holding more than insertionSortMax (events of one time on many
// threads, or a burst) is sorted by comparison.
const (
	eventsPerBucket  = 4
	insertionSortMax = 24
)

// sortEvents orders the events by eventBefore. Over time events spread
// about evenly, so a counting pass puts them into buckets of consecutive
// time, and each bucket, holding a few events, is sorted by insertion.
// Skewed times only make some buckets large, which are sorted by
// comparison, so the worst case stays O(n log n).
//
// The events of one time are those of every thread at one tick, and they
// arrive by sample, not by thread: a first pass orders them by thread, so
// that the buckets come out in order and insertion has little to move.
// Both passes are stable and go between the same two buffers. This
// replaced a radix sort of five passes over the events.
func (x *groupConverter) sortEvents() {
	events := x.events
	if len(events) < 2 || eventsSorted(events) {
		return
	}
	if len(events) <= insertionSortMax {
		insertionSortEvents(events)
		return
	}
	byThread := make([]int, len(x.threads)+1)
	lo, hi := events[0].ts, events[0].ts
	for _, e := range events {
		lo, hi = min(lo, e.ts), max(hi, e.ts)
		byThread[e.thread+1]++
	}
	prefixSums(byThread)
	// A power of two of buckets, so that a bucket is a bit shift of the
	// time since the earliest event.
	buckets := 1 << bits.Len(uint(len(events)/eventsPerBucket))
	shift := bucketShift(hi-lo, buckets)
	starts := make([]int, buckets+1)
	scratch := make([]exportEvent, len(events))
	for _, e := range events {
		scratch[byThread[e.thread]] = e
		byThread[e.thread]++
		starts[(e.ts-lo)>>shift+1]++
	}
	prefixSums(starts)
	next := slices.Clone(starts[:buckets])
	for _, e := range scratch {
		b := (e.ts - lo) >> shift
		events[next[b]] = e
		next[b]++
	}
	for b := range buckets {
		sortBucket(events[starts[b]:starts[b+1]])
	}
}

// bucketShift is the shift that maps a time span onto buckets buckets.
func bucketShift(span uint64, buckets int) int {
	shift := 0
	for span>>shift >= uint64(buckets) {
		shift++
	}
	return shift
}

// sortBucket sorts the events of one bucket: by insertion when few.
func sortBucket(bucket []exportEvent) {
	if len(bucket) > insertionSortMax {
		slices.SortFunc(bucket, compareEvents)
	} else {
		insertionSortEvents(bucket)
	}
}

// prefixSums turns counts, shifted one place up, into start offsets.
func prefixSums(counts []int) {
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
}

func insertionSortEvents(events []exportEvent) {
	for i := 1; i < len(events); i++ {
		e := events[i]
		j := i
		for ; j > 0 && eventBefore(&e, &events[j-1]); j-- {
			events[j] = events[j-1]
		}
		events[j] = e
	}
}

// eventsSorted reports whether the events are already in sortEvents' order.
func eventsSorted(events []exportEvent) bool {
	for i := 1; i < len(events); i++ {
		if eventBefore(&events[i], &events[i-1]) {
			return false
		}
	}
	return true
}

// splitWindows cuts time-sorted events into chunks that span at most
// window nanoseconds: one when they fit, else the fewest windows of equal
// length that hold them, so that no chunk is a short tail (a short chunk
// has more threads with a single sample, which Relay drops). Windows
// without events are skipped.
func splitWindows(events []exportEvent, window uint64) [][]exportEvent {
	first, last := events[0].ts, events[len(events)-1].ts
	span := last - first
	if span <= window {
		return [][]exportEvent{events}
	}
	n := span/window + 1 // span/window rounded up, or one more when it divides
	width := span/n + 1  // ≤ window; events of one window span < width
	var out [][]exportEvent
	for len(events) > 0 {
		// The window of the first remaining event ends at a multiple of
		// width past first; one that would end past last takes the rest
		// (computed relative to first, so that nothing wraps around).
		n := len(events)
		if k := (events[0].ts-first)/width + 1; k <= span/width {
			end := first + k*width // k*width ≤ span: no overflow
			n, _ = slices.BinarySearchFunc(events, end, func(ev exportEvent, t uint64) int { return cmp.Compare(ev.ts, t) })
		}
		out = append(out, events[:n:n])
		events = events[n:]
	}
	return out
}

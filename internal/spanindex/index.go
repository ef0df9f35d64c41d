// Package spanindex keeps the spans a Sentry SDK reported recently, by the
// continuous profiler that ran under them, so that the samples of a V2
// profile chunk can be linked to the innermost span active on their thread
// at their time.
//
// Sentry joins chunks and spans only at query time; a chunk carries no trace
// information, and its spans come in other envelopes (transaction items,
// span-streaming containers), before or after it. The index is the memory
// that joins them: bounded in spans, profilers and age, indexed by profiler,
// and answering for a chunk with a Timeline that is searched per sample in
// logarithmic time.
package spanindex // import "github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"
)

// Span is what the index keeps of one Sentry span: the span-index view
// the translator maps a transaction or span item to (traceitems.IndexSpans).
type Span = traceitems.IndexedSpan

// Limits bound the index. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	// TTL is how long a span is kept after it arrived. It must cover a
	// chunk's length (SDKs cut chunks of up to 60 s) and the wait for it.
	TTL time.Duration
	// MaxSpans bounds the spans kept across all profilers; MaxSpansPerProfiler
	// those of one profiler (its oldest go first).
	MaxSpans            int
	MaxSpansPerProfiler int
	// MaxProfilers bounds the profilers (and segments) tracked.
	MaxProfilers int
	// MaxPending bounds the streamed child spans held until their segment,
	// which names the profiler, arrives.
	MaxPending int
}

// DefaultLimits returns the index's bounds: three minutes cover a 60 s
// chunk, a wait of a few seconds and an SDK's send delays; 200,000 spans
// are about 25 MB.
func DefaultLimits() Limits {
	return Limits{
		TTL:                 3 * time.Minute,
		MaxSpans:            200_000,
		MaxSpansPerProfiler: 20_000,
		MaxProfilers:        10_000,
		MaxPending:          50_000,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.TTL <= 0 {
		l.TTL = d.TTL
	}
	if l.MaxSpans <= 0 {
		l.MaxSpans = d.MaxSpans
	}
	if l.MaxSpansPerProfiler <= 0 {
		l.MaxSpansPerProfiler = d.MaxSpansPerProfiler
	}
	if l.MaxProfilers <= 0 {
		l.MaxProfilers = d.MaxProfilers
	}
	if l.MaxPending <= 0 {
		l.MaxPending = d.MaxPending
	}
	return l
}

// Stats are the index's counters since it was made, and its size now.
type Stats struct {
	Spans    int // spans kept now
	Pending  int // streamed child spans waiting for their segment now
	Evicted  int // spans let go before their TTL to keep the bounds
	Rejected int // spans not kept: no profiler, no time range, or no room while pending
}

// Index is safe for concurrent use.
type Index struct {
	limits Limits

	mu        sync.Mutex
	profilers map[string]*profilerSpans
	segments  map[pcommon.SpanID]segment
	pending   map[pcommon.SpanID][]entry // by segment id
	spans     int
	nPending  int
	evicted   int
	rejected  int
	lastSweep time.Time
}

// entry is a kept span and when it arrived.
type entry struct {
	Span
	seen time.Time
}

// profilerSpans are one profiler's spans in arrival order, so that the
// oldest (expired or evicted first) are a prefix.
type profilerSpans struct {
	entries  []entry
	lastSeen time.Time
}

// segment is what a child span needs of its segment.
type segment struct {
	profilerID string
	threadID   string
	seen       time.Time
}

// New returns an empty index.
func New(limits Limits) *Index {
	return &Index{
		limits:    limits.withDefaults(),
		profilers: make(map[string]*profilerSpans),
		segments:  make(map[pcommon.SpanID]segment),
		pending:   make(map[pcommon.SpanID][]entry),
	}
}

// Add records spans that arrived at now. Segments should come before their
// children in spans (as transactions and span containers list them, or
// not: a child whose segment is unknown waits for it).
func (x *Index) Add(now time.Time, spans []Span) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sweep(now)
	// Segments first: a container lists a segment after its children.
	unprofiled := map[pcommon.SpanID]bool{}
	for i := range spans {
		s := &spans[i]
		if s.SegmentID.IsEmpty() || s.SegmentID != s.SpanID {
			continue
		}
		if s.ProfilerID == "" {
			// A segment without a profiler: the spans that do not name
			// one themselves link to nothing, so neither they nor the
			// children waiting for it are kept.
			unprofiled[s.SpanID] = true
			x.dropPending(s.SpanID)
			continue
		}
		x.addSegment(now, s)
	}
	for i := range spans {
		// A span that names its own profiler is kept under any segment:
		// sentry-python 3 names the profiler only on the spans that ran
		// while it did, and not on a root started before it.
		if unprofiled[spans[i].SegmentID] && spans[i].ProfilerID == "" {
			continue
		}
		x.addSpan(now, spans[i])
	}
}

// dropPending lets go of the children waiting for a segment.
func (x *Index) dropPending(segmentID pcommon.SpanID) {
	children := x.pending[segmentID]
	x.nPending -= len(children)
	x.rejected += len(children)
	delete(x.pending, segmentID)
}

func (x *Index) addSegment(now time.Time, s *Span) {
	if _, ok := x.segments[s.SpanID]; !ok && len(x.segments) >= x.limits.MaxProfilers*4 {
		x.evictSegments()
	}
	x.segments[s.SpanID] = segment{profilerID: s.ProfilerID, threadID: s.ThreadID, seen: now}
	children := x.pending[s.SpanID]
	if children == nil {
		return
	}
	delete(x.pending, s.SpanID)
	x.nPending -= len(children)
	for _, c := range children {
		c.ProfilerID = s.ProfilerID
		c.seen = now // the profiler's entries stay in arrival order
		if c.ThreadID == "" {
			c.ThreadID = s.ThreadID
		}
		x.keep(now, c)
	}
}

// fromSegment gives a span what it does not say itself of its known
// segment: the profiler and the thread.
func (x *Index) fromSegment(s *Span) {
	seg, known := x.segments[s.SegmentID]
	if s.SegmentID.IsEmpty() || !known {
		return
	}
	s.ProfilerID = cmp.Or(s.ProfilerID, seg.profilerID)
	s.ThreadID = cmp.Or(s.ThreadID, seg.threadID)
}

func (x *Index) addSpan(now time.Time, s Span) {
	if s.TraceID.IsEmpty() || s.SpanID.IsEmpty() || s.End <= s.Start {
		x.rejected++
		return
	}
	x.fromSegment(&s)
	if s.ProfilerID != "" {
		x.keep(now, entry{Span: s, seen: now})
		return
	}
	if s.SegmentID.IsEmpty() {
		x.rejected++
		return
	}
	if x.nPending >= x.limits.MaxPending {
		// The oldest waiting children go first: a flood of spans whose
		// segment never comes must not keep out the next ones.
		x.evictPending()
	}
	x.pending[s.SegmentID] = append(x.pending[s.SegmentID], entry{Span: s, seen: now})
	x.nPending++
}

// evictPending lets go of the eighth of the waiting groups that arrived
// first (at least one), sorting once per many insertions.
func (x *Index) evictPending() {
	type aged struct {
		id   pcommon.SpanID
		seen time.Time
	}
	all := make([]aged, 0, len(x.pending))
	for id, children := range x.pending {
		all = append(all, aged{id, children[0].seen})
	}
	slices.SortFunc(all, func(a, b aged) int { return a.seen.Compare(b.seen) })
	for _, a := range all[:max(1, len(all)/8)] {
		x.dropPending(a.id)
	}
}

// evictSegments forgets the eighth of the segments seen first: a child
// arriving later waits for its segment again, and a segment is seen again
// when the SDK reports its next span.
func (x *Index) evictSegments() {
	type aged struct {
		id   pcommon.SpanID
		seen time.Time
	}
	all := make([]aged, 0, len(x.segments))
	for id, s := range x.segments {
		all = append(all, aged{id, s.seen})
	}
	slices.SortFunc(all, func(a, b aged) int { return a.seen.Compare(b.seen) })
	for _, a := range all[:max(1, len(all)/8)] {
		delete(x.segments, a.id)
	}
}

// keep adds a span with its profiler, evicting the oldest spans to stay in
// bounds.
func (x *Index) keep(now time.Time, e entry) {
	p := x.profilers[e.ProfilerID]
	if p == nil {
		if len(x.profilers) >= x.limits.MaxProfilers {
			x.evictProfilers()
		}
		p = &profilerSpans{}
		x.profilers[e.ProfilerID] = p
	}
	if len(p.entries) >= x.limits.MaxSpansPerProfiler {
		// Drop an eighth at once: one copy per many spans, not per span.
		n := max(1, len(p.entries)/8)
		x.dropPrefix(p, n)
		x.evicted += n
	}
	if x.spans >= x.limits.MaxSpans {
		x.evictProfilers()
	}
	p.entries = append(p.entries, e)
	p.lastSeen = now
	x.spans++
}

func (x *Index) dropPrefix(p *profilerSpans, n int) {
	p.entries = slices.Delete(p.entries, 0, n)
	x.spans -= n
}

// evictProfilers lets go of the eighth of the profilers seen least
// recently, whole: sorting once per many insertions keeps eviction cheap
// under a flood of new profilers.
func (x *Index) evictProfilers() {
	type aged struct {
		id   string
		seen time.Time
	}
	all := make([]aged, 0, len(x.profilers))
	for id, p := range x.profilers {
		all = append(all, aged{id, p.lastSeen})
	}
	slices.SortFunc(all, func(a, b aged) int { return a.seen.Compare(b.seen) })
	n := max(1, len(all)/8)
	for _, a := range all[:n] {
		p := x.profilers[a.id]
		x.spans -= len(p.entries)
		x.evicted += len(p.entries)
		delete(x.profilers, a.id)
	}
}

// sweep drops what is older than the TTL, at most every TTL/8.
func (x *Index) sweep(now time.Time) {
	if now.Sub(x.lastSweep) < x.limits.TTL/8 {
		return
	}
	x.lastSweep = now
	cutoff := now.Add(-x.limits.TTL)
	x.expireProfilers(cutoff)
	for id, s := range x.segments {
		if s.seen.Before(cutoff) {
			delete(x.segments, id)
		}
	}
	for id, children := range x.pending {
		if children[len(children)-1].seen.Before(cutoff) {
			x.nPending -= len(children)
			x.rejected += len(children)
			delete(x.pending, id)
		}
	}
}

// expireProfilers drops the spans seen before cutoff, and the profilers
// left without any.
func (x *Index) expireProfilers(cutoff time.Time) {
	for id, p := range x.profilers {
		n, _ := slices.BinarySearchFunc(p.entries, cutoff, func(e entry, t time.Time) int { return e.seen.Compare(t) })
		switch n {
		case len(p.entries):
			x.spans -= n
			delete(x.profilers, id)
		case 0:
		default:
			x.dropPrefix(p, n)
		}
	}
}

// Stats returns the counters and sizes.
func (x *Index) Stats() Stats {
	x.mu.Lock()
	defer x.mu.Unlock()
	return Stats{Spans: x.spans, Pending: x.nPending, Evicted: x.evicted, Rejected: x.rejected}
}

// Timeline returns the spans of a profiler that overlap [from, to] (Unix
// nanoseconds, inclusive: a chunk's first and last sample), ready to be
// searched; nil when there are none.
func (x *Index) Timeline(now time.Time, profilerID string, from, to uint64) *Timeline {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sweep(now)
	p := x.profilers[profilerID]
	if p == nil {
		return nil
	}
	var spans []Span
	for i := range p.entries {
		s := &p.entries[i].Span
		if s.Start <= to && s.End > from {
			spans = append(spans, *s)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	return newTimeline(spans)
}

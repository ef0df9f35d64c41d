package profilesin

// Transactions and links: "transaction" / "transactions" (V1) → profile
// attributes and each sample's Link; V2 chunks link through SpanLookup.
// Nothing goes back: a chunk has no transaction and no trace fields, and
// Sentry joins chunks and spans by profiler, thread and time itself.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// SpanLookup tells which span was the innermost one active on a thread at a
// time (Unix nanoseconds). A V2 chunk carries no trace information: its
// spans come in other envelopes, and the receiver's span index answers for
// them (its timeline of a profiler, handed over through a SpanSource).
type SpanLookup interface {
	SpanAt(threadID string, unixNano uint64) (pcommon.TraceID, pcommon.SpanID, bool)
}

// SpanSource is where a V2 chunk's spans come from: the spans of one
// profiler over a time range (Unix nanoseconds, both ends included), as a
// SpanLookup; nil when it knows none. The receiver adapts its span index
// to it; the translator keeps no spans of its own.
type SpanSource interface {
	ProfilerSpans(profilerID string, from, to uint64) SpanLookup
}

// ChunkSpans returns the spans of src that a V2 chunk's samples may link
// to (those of its profiler over the chunk's time range), or nil: for a
// nil src, a V1 profile, a chunk without a profiler or samples, or one
// whose samples are all before the Unix epoch.
func ChunkSpans(src SpanSource, p *sentry.Profile) SpanLookup {
	if src == nil || p.Version != sentry.VersionV2 || p.ProfilerID == "" || len(p.Samples) == 0 {
		return nil
	}
	first, last := sampleTimeRange(p.Samples)
	if last < 0 {
		return nil
	}
	return src.ProfilerSpans(p.ProfilerID, uint64(max(first, 0)), uint64(last))
}

// sampleTimeRange is the earliest and latest "timestamp" of a chunk's
// samples (not empty).
func sampleTimeRange(samples []sentry.Sample) (first, last int64) {
	first, last = samples[0].Timestamp, samples[0].Timestamp
	for i := range samples {
		first, last = min(first, samples[i].Timestamp), max(last, samples[i].Timestamp)
	}
	return first, last
}

// sampleLinks finds the span a sample links to.
//
// V1: the innermost span of the envelope's transaction that ran on the
// sample's thread at its time, else the transaction's root span. Without a
// transaction item it falls back to the profile's own transaction metadata
// (trace_id, segment_id), restricted to the transaction's relative range
// when the profile gives one.
//
// V2: the innermost span of the chunk's profiler active on the sample's
// thread at its time, as the receiver's span index knows them; none outside
// every span.
type sampleLinks struct {
	lookup SpanLookup // V2
	// ranges are the transaction's spans (the first spans of them, searched
	// for the innermost), then its root span; or the profile's own
	// transactions.
	ranges []spanRange
	spans  int
}

// spanRange is a span a sample may link to: on a thread (any for ""), over
// a time range (any when all).
type spanRange struct {
	thread     string
	start, end uint64
	all        bool
	trace      pcommon.TraceID
	span       pcommon.SpanID
	// link is the span's Link in the dictionary, set by the walk.
	link int32
}

// sampleLinksOf is the span links of p's samples: through lookup for a V2
// chunk, else through tx (the envelope's transaction, or nil). start is
// when a V1 profile starts.
func sampleLinksOf(p *sentry.Profile, tx *sentrytrace.Segment, lookup SpanLookup, start uint64) sampleLinks {
	if isV2(p) {
		return sampleLinks{lookup: lookup}
	}
	if tx != nil {
		return transactionLinks(tx)
	}
	var l sampleLinks
	for i := range p.Transactions {
		if r, ok := ownTransactionRange(&p.Transactions[i], start); ok {
			l.ranges = append(l.ranges, r)
		}
	}
	return l
}

// ownTransactionRange: a profile's own "transactions"[]."trace_id",
// "segment_id", "relative_start_ns", "relative_end_ns" → the Link of the
// samples in that range (of every sample without one); false without a
// trace and a span id.
func ownTransactionRange(t *sentry.Transaction, start uint64) (spanRange, bool) {
	trace := pcommon.TraceID(sentryid.Parse(t.TraceID))
	span := sentryid.SpanID(t.SegmentID)
	if trace.IsEmpty() || span.IsEmpty() {
		return spanRange{}, false
	}
	r := spanRange{trace: trace, span: span, all: t.RelativeEndNS <= t.RelativeStartNS}
	if !r.all {
		r.start, r.end = start+t.RelativeStartNS, start+t.RelativeEndNS
	}
	return r, true
}

// transactionLinks links to the spans of a V1 profile's transaction: the
// spans ("spans") that say which thread they ran on ("data"."thread.id"),
// then the segment ("contexts.trace"), all in the segment's trace.
func transactionLinks(tx *sentrytrace.Segment) sampleLinks {
	var l sampleLinks
	trace, root := segmentIDs(tx)
	if trace.IsEmpty() {
		return l
	}
	for i := range tx.Spans {
		if r, ok := threadSpan(&tx.Spans[i], trace); ok {
			l.ranges = append(l.ranges, r)
		}
	}
	l.spans = len(l.ranges)
	if !root.IsEmpty() {
		l.ranges = append(l.ranges, spanRange{all: true, trace: trace, span: root})
	}
	return l
}

// segmentIDs are the trace and span ids of a transaction's segment
// ("contexts.trace"."trace_id", "span_id").
func segmentIDs(tx *sentrytrace.Segment) (pcommon.TraceID, pcommon.SpanID) {
	var trace pcommon.TraceID
	var root pcommon.SpanID
	for i := range tx.Spans {
		if s := &tx.Spans[i]; s.IsSegment {
			trace, root = sentryid.TraceID(s.TraceID), sentryid.SpanID(s.SpanID)
		}
	}
	return trace, root
}

// threadSpan is a child span ("spans"[]) a sample may link to: one with an
// id that says which thread it ran on, over a time range; false for any
// other span.
func threadSpan(s *sentrytrace.Span, trace pcommon.TraceID) (spanRange, bool) {
	span, thread := sentryid.SpanID(s.SpanID), spanThreadID(s)
	if s.IsSegment || span.IsEmpty() || thread == "" || s.Start < 0 || s.End < s.Start {
		return spanRange{}, false
	}
	return spanRange{thread: thread, start: uint64(s.Start), end: uint64(s.End), trace: trace, span: span}, true
}

// spanThreadID is the thread a span ran on ("thread.id"), as decimal text;
// "" when it does not say.
func spanThreadID(s *sentrytrace.Span) string {
	for _, a := range s.Attributes {
		if a.Key == string(semconv.ThreadIDKey) {
			return sentryid.ThreadIDText(a.Value)
		}
	}
	return ""
}

// rangeAt is the range a sample on thread at ts links to: the innermost
// span, else the first range that covers it; nil for none.
func (l *sampleLinks) rangeAt(thread string, ts uint64) *spanRange {
	if r := l.innermostSpan(thread, ts); r != nil {
		return r
	}
	for i := l.spans; i < len(l.ranges); i++ {
		if r := &l.ranges[i]; r.all || (r.start <= ts && ts <= r.end) {
			return r
		}
	}
	return nil
}

// innermostSpan is the span on thread active at ts that started last; nil
// for none.
func (l *sampleLinks) innermostSpan(thread string, ts uint64) *spanRange {
	var best *spanRange
	for i := range l.spans {
		s := &l.ranges[i]
		if s.covers(thread, ts) && (best == nil || s.start > best.start) {
			best = s
		}
	}
	return best
}

// covers reports whether the span ran on thread at ts: [start, end).
func (r *spanRange) covers(thread string, ts uint64) bool {
	return r.thread == thread && r.start <= ts && ts < r.end
}

// transactionAttrs: "transaction" / "transactions" (V1) → profile
// attribute sentry.transactions, every field of every transaction; the first
// one's "name", "id" and "trace_id" also as sentry.transaction.name, .id and
// .trace_id, what a pipeline routes or filters on. No way back: a V2 chunk
// has no transaction (lossy V1 → V2); the links of the samples carry the
// trace.
func transactionAttrs(p *sentry.Profile) ([3]stringAttr, profileAttr) {
	if len(p.Transactions) == 0 {
		return [3]stringAttr{}, profileAttr{}
	}
	first := p.Transactions[0]
	names := [3]stringAttr{
		{sentryattr.TransactionName, first.Name},
		{sentryattr.TransactionID, first.ID},
		{sentryattr.TransactionTraceID, first.TraceID},
	}
	v := pcommon.NewValueSlice()
	s := v.Slice()
	s.EnsureCapacity(len(p.Transactions))
	for _, t := range p.Transactions {
		m := s.AppendEmpty().SetEmptyMap()
		profileschema.PutNonEmpty(m, profileschema.KeyID, t.ID)                         // "id"
		profileschema.PutNonEmpty(m, profileschema.KeyName, t.Name)                     // "name"
		profileschema.PutNonEmpty(m, profileschema.KeyTraceID, t.TraceID)               // "trace_id"
		profileschema.PutNonEmpty(m, profileschema.KeySegmentID, t.SegmentID)           // "segment_id"
		profileschema.PutNonEmpty(m, profileschema.KeyActiveThreadID, t.ActiveThreadID) // "active_thread_id"
		if t.RelativeStartNS != 0 || t.RelativeEndNS != 0 {
			m.PutInt(profileschema.KeyRelativeStartNS, int64(t.RelativeStartNS)) // "relative_start_ns"
			m.PutInt(profileschema.KeyRelativeEndNS, int64(t.RelativeEndNS))     // "relative_end_ns"
		}
	}
	return names, profileAttr{key: sentryattr.Transactions, value: v}
}

package traceitems

// The span index's view of a transaction or span item: its spans as the
// receiver's index keeps them. The chunks' side (which spans a V2 chunk may
// link to) is profilesin.ChunkSpans.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// spanKeySegmentID is the span attribute (span v2) naming the segment a
// streamed span belongs to; the span index reads it beside semconv
// thread.id.
const spanKeySegmentID = "sentry.segment.id"

// IndexedSpan is what the receiver's span index keeps of one Sentry span:
// enough to find, for a V2 chunk's sample, the innermost span of its
// profiler active on its thread at its time.
type IndexedSpan struct {
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
	// SegmentID is the span's segment: the transaction's root span
	// ("contexts.trace.span_id") or span v2 "sentry.segment.id". A segment
	// is its own segment. Zero when the span does not say.
	SegmentID pcommon.SpanID
	// ProfilerID is the profiler sentrytrace.Span names (a span's own, else
	// its transaction's). Streamed child spans carry it only on their
	// segment: empty here, it is taken from the segment.
	ProfilerID string
	// ThreadID is the decimal "thread.id" of the span's data/attributes;
	// empty when the span does not say, and the span then ran on its
	// segment's thread (on every thread when the segment does not say
	// either).
	ThreadID string
	// Start and End are Unix nanoseconds; the span covers [Start, End).
	Start, End uint64
}

// IndexSpans maps the spans of one transaction or span item to the span
// index's entries. A span with a negative start or end is left out.
func IndexSpans(seg *sentrytrace.Segment) []IndexedSpan {
	spans := make([]IndexedSpan, 0, len(seg.Spans))
	root := rootSpanID(seg)
	for i := range seg.Spans {
		if s := &seg.Spans[i]; s.Start >= 0 && s.End >= 0 {
			spans = append(spans, indexedSpan(s, root))
		}
	}
	return spans
}

// rootSpanID is the span id of the segment's root span; zero when it has
// none (a span container of children only).
func rootSpanID(seg *sentrytrace.Segment) pcommon.SpanID {
	var root pcommon.SpanID
	for i := range seg.Spans {
		if seg.Spans[i].IsSegment {
			root = sentryid.SpanID(seg.Spans[i].SpanID)
		}
	}
	return root
}

// indexedSpan maps one span: "trace_id", "span_id", its profiler, start
// and end, the thread it ran on and its segment. A transaction's spans
// belong to its root; a streamed span names its segment (and the segment
// is its own).
func indexedSpan(s *sentrytrace.Span, root pcommon.SpanID) IndexedSpan {
	entry := IndexedSpan{
		TraceID:    sentryid.TraceID(s.TraceID),
		SpanID:     sentryid.SpanID(s.SpanID),
		ProfilerID: s.ProfilerID,
		Start:      uint64(s.Start),
		End:        uint64(s.End),
		SegmentID:  root,
	}
	for _, a := range s.Attributes {
		putIndexedAttr(&entry, a)
	}
	if s.IsSegment {
		entry.SegmentID = entry.SpanID
	}
	return entry
}

// putIndexedAttr reads the span attributes the index keeps: "thread.id"
// (the thread the span ran on) and "sentry.segment.id" (the segment a
// streamed span belongs to).
func putIndexedAttr(entry *IndexedSpan, a sentrytrace.Attribute) {
	switch a.Key {
	case string(semconv.ThreadIDKey):
		entry.ThreadID = sentryid.ThreadIDText(a.Value)
	case spanKeySegmentID:
		if v, ok := a.Value.(string); ok {
			entry.SegmentID = sentryid.SpanID(v)
		}
	}
}

package translator

// The span index's side of the mapping: the spans of a transaction or span
// item as the index keeps them, and the spans a V2 chunk may link to.

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// Span attributes (span v2) and data keys (transactions) the span index
// reads.
const (
	spanKeyThreadID  = "thread.id"
	spanKeySegmentID = "sentry.segment.id"
)

// IndexSpans maps the spans of one transaction or span item to the span
// index's entries. A span with a negative start or end is left out.
func IndexSpans(seg *sentrytrace.Segment) []spanindex.Span {
	spans := make([]spanindex.Span, 0, len(seg.Spans))
	var root pcommon.SpanID
	for i := range seg.Spans {
		if seg.Spans[i].IsSegment {
			root = ParseSpanID(seg.Spans[i].SpanID)
		}
	}
	for i := range seg.Spans {
		s := &seg.Spans[i]
		if s.Start < 0 || s.End < 0 {
			continue
		}
		entry := spanindex.Span{
			TraceID:    ParseTraceID(s.TraceID),
			SpanID:     ParseSpanID(s.SpanID),
			ProfilerID: s.ProfilerID,
			Start:      uint64(s.Start),
			End:        uint64(s.End),
			// A transaction's spans belong to its root; a streamed span
			// names its segment (and the segment itself).
			SegmentID: root,
		}
		for _, a := range s.Attributes {
			switch a.Key {
			// "thread.id" → the thread the span ran on
			case spanKeyThreadID:
				entry.ThreadID = threadIDText(a.Value)
			// "sentry.segment.id" → the segment a streamed span belongs to
			case spanKeySegmentID:
				if v, ok := a.Value.(string); ok {
					entry.SegmentID = ParseSpanID(v)
				}
			}
		}
		if s.IsSegment {
			entry.SegmentID = entry.SpanID
		}
		spans = append(spans, entry)
	}
	return spans
}

// threadIDText renders a span's thread.id (a number or a string) as Sentry
// chunks write thread ids: decimal text.
func threadIDText(v any) string {
	switch id := v.(type) {
	case string:
		return id
	case int64:
		return strconv.FormatInt(id, 10)
	case float64:
		if id >= 0 && id == float64(int64(id)) {
			return strconv.FormatInt(int64(id), 10)
		}
	}
	return ""
}

// ChunkSpans returns the spans of index that a V2 chunk's samples may link
// to (those of its profiler over the chunk's time range), or nil.
func ChunkSpans(index *spanindex.Index, now time.Time, p *sentry.Profile) SpanLookup {
	if index == nil || p.Version != sentry.VersionV2 || p.ProfilerID == "" || len(p.Samples) == 0 {
		return nil
	}
	first, last := p.Samples[0].Timestamp, p.Samples[0].Timestamp
	for i := range p.Samples {
		first, last = min(first, p.Samples[i].Timestamp), max(last, p.Samples[i].Timestamp)
	}
	if first < 0 {
		first = 0
	}
	if last < 0 {
		return nil
	}
	timeline := index.Timeline(now, p.ProfilerID, uint64(first), uint64(last))
	if timeline == nil {
		return nil // not a nil *Timeline in a non-nil interface
	}
	return timeline
}

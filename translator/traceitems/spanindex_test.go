package traceitems

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

func TestIndexSpans(t *testing.T) {
	const (
		trace = "dd2619a66dba46f7939c718fdab394b6"
		root  = "a1a1a1a1a1a1a1a1"
		child = "b2b2b2b2b2b2b2b2"
		other = "c3c3c3c3c3c3c3c3"
	)
	traceID := pcommon.TraceID{0xdd, 0x26, 0x19, 0xa6, 0x6d, 0xba, 0x46, 0xf7, 0x93, 0x9c, 0x71, 0x8f, 0xda, 0xb3, 0x94, 0xb6}
	rootID := pcommon.SpanID{0xa1, 0xa1, 0xa1, 0xa1, 0xa1, 0xa1, 0xa1, 0xa1}
	childID := pcommon.SpanID{0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2}
	otherID := pcommon.SpanID{0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3}
	tests := []struct {
		name  string
		spans []sentrytrace.Span
		want  []IndexedSpan
	}{
		{
			name: "a transaction's spans belong to its root; thread.id as a number or text",
			spans: []sentrytrace.Span{
				{TraceID: trace, SpanID: root, IsSegment: true, ProfilerID: "p", Start: 5, End: 30,
					Attributes: []sentrytrace.Attribute{{Key: "thread.id", Value: "1"}}},
				{TraceID: trace, SpanID: child, ProfilerID: "p", Start: 8, End: 15,
					Attributes: []sentrytrace.Attribute{{Key: "thread.id", Value: float64(2)}}},
			},
			want: []IndexedSpan{
				{TraceID: traceID, SpanID: rootID, SegmentID: rootID, ProfilerID: "p", ThreadID: "1", Start: 5, End: 30},
				{TraceID: traceID, SpanID: childID, SegmentID: rootID, ProfilerID: "p", ThreadID: "2", Start: 8, End: 15},
			},
		},
		{
			name: "a streamed span names its segment",
			spans: []sentrytrace.Span{
				{TraceID: trace, SpanID: child, Start: 8, End: 15,
					Attributes: []sentrytrace.Attribute{{Key: "sentry.segment.id", Value: other}, {Key: "thread.id", Value: int64(7)}}},
			},
			want: []IndexedSpan{{TraceID: traceID, SpanID: childID, SegmentID: otherID, ThreadID: "7", Start: 8, End: 15}},
		},
		{
			name: "negative times and thread ids that are not integers are left out",
			spans: []sentrytrace.Span{
				{TraceID: trace, SpanID: root, Start: -1, End: 30},
				{TraceID: trace, SpanID: child, Start: 8, End: 15,
					Attributes: []sentrytrace.Attribute{{Key: "thread.id", Value: 1.5}, {Key: "sentry.segment.id", Value: 3}}},
			},
			want: []IndexedSpan{{TraceID: traceID, SpanID: childID, Start: 8, End: 15}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IndexSpans(&sentrytrace.Segment{Spans: tt.spans}))
		})
	}
}

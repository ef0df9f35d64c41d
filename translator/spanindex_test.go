package translator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
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
		want  []spanindex.Span
	}{
		{
			name: "a transaction's spans belong to its root; thread.id as a number or text",
			spans: []sentrytrace.Span{
				{TraceID: trace, SpanID: root, IsSegment: true, ProfilerID: "p", Start: 5, End: 30,
					Attributes: []sentrytrace.Attribute{{Key: "thread.id", Value: "1"}}},
				{TraceID: trace, SpanID: child, ProfilerID: "p", Start: 8, End: 15,
					Attributes: []sentrytrace.Attribute{{Key: "thread.id", Value: float64(2)}}},
			},
			want: []spanindex.Span{
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
			want: []spanindex.Span{{TraceID: traceID, SpanID: childID, SegmentID: otherID, ThreadID: "7", Start: 8, End: 15}},
		},
		{
			name: "negative times and thread ids that are not integers are left out",
			spans: []sentrytrace.Span{
				{TraceID: trace, SpanID: root, Start: -1, End: 30},
				{TraceID: trace, SpanID: child, Start: 8, End: 15,
					Attributes: []sentrytrace.Attribute{{Key: "thread.id", Value: 1.5}, {Key: "sentry.segment.id", Value: 3}}},
			},
			want: []spanindex.Span{{TraceID: traceID, SpanID: childID, Start: 8, End: 15}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IndexSpans(&sentrytrace.Segment{Spans: tt.spans}))
		})
	}
}

func TestChunkSpans(t *testing.T) {
	index := spanindex.New(spanindex.Limits{TTL: time.Minute, MaxSpans: 100, MaxSpansPerProfiler: 100, MaxProfilers: 10, MaxPending: 10})
	now := time.Now()
	index.Add(now, []spanindex.Span{{TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{1}, SegmentID: pcommon.SpanID{1}, ProfilerID: "p", ThreadID: "1", Start: 10, End: 20}})
	chunk := func(version, profiler string, timestamps ...int64) *sentry.Profile {
		p := &sentry.Profile{Version: version, ProfilerID: profiler}
		for _, ts := range timestamps {
			p.Samples = append(p.Samples, sentry.Sample{Timestamp: ts})
		}
		return p
	}
	tests := []struct {
		name    string
		index   *spanindex.Index
		profile *sentry.Profile
		linked  bool
	}{
		{"a chunk of the profiler", index, chunk(sentry.VersionV2, "p", 12, 15), true},
		{"a chunk of another profiler", index, chunk(sentry.VersionV2, "q", 12, 15), false},
		{"a chunk after the spans", index, chunk(sentry.VersionV2, "p", 25, 30), false},
		{"no index", nil, chunk(sentry.VersionV2, "p", 12), false},
		{"a V1 profile", index, chunk(sentry.VersionV1, "p", 12), false},
		{"no profiler id", index, chunk(sentry.VersionV2, "", 12), false},
		{"no samples", index, chunk(sentry.VersionV2, "p"), false},
		{"before the epoch", index, chunk(sentry.VersionV2, "p", -5, -1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChunkSpans(tt.index, now, tt.profile)
			assert.Equal(t, tt.linked, got != nil)
		})
	}
}

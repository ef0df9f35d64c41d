package traceitems

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// wantSpan is what a test knows of one OTLP span.
type wantSpan struct {
	spanID, parentID, traceID string
	name                      string
	kind                      ptrace.SpanKind
	code                      ptrace.StatusCode
	message                   string
	start, end                int64
	attrs                     map[string]any // a subset; nil value means absent
}

func TestAppendTraces(t *testing.T) {
	const staticTrace = "0af7651916cd43dd8448eb211c80319c"
	const streamTrace = "1af7651916cd43dd8448eb211c80319c"
	unix := func(s string) int64 {
		ts, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return ts.UnixNano()
	}
	tests := []struct {
		file     string
		decode   func([]byte) (*sentrytrace.Segment, error)
		opts     TraceOptions
		resource map[string]any
		spans    []wantSpan
	}{
		{
			file:   "transaction_static.json",
			decode: sentrytrace.DecodeTransaction,
			opts:   TraceOptions{ProjectID: "42"},
			resource: map[string]any{
				"service.name": "checkout", "service.version": "checkout@1.2.3", "deployment.environment.name": "e2e",
				"sentry.platform": "node", "sentry.project.id": "42", "os.name": "Linux", "process.runtime.name": "node",
				"process.runtime.version": "v20.20.2", "host.arch": "x64", "telemetry.sdk.name": "sentry.javascript.node",
				"telemetry.sdk.version": "11.1.0",
			},
			spans: []wantSpan{
				{spanID: "a1b2c3d4e5f60718", traceID: staticTrace, name: "e2e-job", kind: ptrace.SpanKindInternal, code: ptrace.StatusCodeOk,
					start: 1795000000_000001000, end: 1795000002_500000000,
					attrs: map[string]any{"sentry.op": "function", "sentry.origin": "manual", "thread.id": "0", "thread.name": "main",
						"sentry.profiler_id": "5b2c7ef8a32d4e6fb1c0d9e8f7a6b5c4", "sentry.event_id": "9ec79c33ec9942ab8353589fcb2e04dc",
						"sentry.sample_rate": int64(1), "region": "eu", "rows": "7",
						"sentry.measurements.lcp": 1234.5, "sentry.measurements.lcp.unit": "millisecond", "sentry.measurements.cls": 0.1,
						"sentry.measurements.cls.unit": nil, "user.email": nil, "url.full": nil, "http.request.header.cookie": nil}},
				{spanID: "b1b2c3d4e5f60718", parentID: "a1b2c3d4e5f60718", traceID: staticTrace, name: "e2e-step", kind: ptrace.SpanKindInternal,
					code: ptrace.StatusCodeOk, start: 1795000000_100123000, end: 1795000001_250000000,
					attrs: map[string]any{"thread.id": "0", "rows": int64(12), "ratio": 0.5, "flags": []any{"a", "b"}, "nested": `{"k":[1,2]}`,
						"sentry.profiler_id": "5b2c7ef8a32d4e6fb1c0d9e8f7a6b5c4", "sentry.status": nil}},
				{spanID: "c1b2c3d4e5f60718", parentID: "b1b2c3d4e5f60718", traceID: staticTrace, name: "SELECT 1", kind: ptrace.SpanKindClient,
					code: ptrace.StatusCodeError, message: "internal_error", start: 1795000000_200000000, end: 1795000000_300000000,
					attrs: map[string]any{"db.system": "postgresql", "retry": "2", "sentry.status": "internal_error", "sentry.origin": "auto.db"}},
				// No description: named after its op; no trace_id: the transaction's.
				{spanID: "d1b2c3d4e5f60718", parentID: "a1b2c3d4e5f60718", traceID: staticTrace, name: "http.client", kind: ptrace.SpanKindClient,
					code: ptrace.StatusCodeUnset, start: unix("2026-11-24T12:00:00.5Z"), end: unix("2026-11-24T12:00:00.75Z")},
			},
		},
		{
			file:     "transaction_static.json",
			decode:   sentrytrace.DecodeTransaction,
			opts:     TraceOptions{ServiceName: "shop", IncludeUserData: true},
			resource: map[string]any{"service.name": "shop", "sentry.project.id": nil},
			spans: []wantSpan{
				{spanID: "a1b2c3d4e5f60718", traceID: staticTrace, name: "e2e-job", kind: ptrace.SpanKindInternal, code: ptrace.StatusCodeOk,
					start: 1795000000_000001000, end: 1795000002_500000000,
					attrs: map[string]any{"user.id": "42", "user.email": "jane@example.com", "url.full": "http://localhost/x?token=1",
						"http.request.method": "GET", "http.request.header.cookie": "a=b", "http.request.header.user-agent": "ua"}},
				{spanID: "b1b2c3d4e5f60718", parentID: "a1b2c3d4e5f60718", traceID: staticTrace, name: "e2e-step", kind: ptrace.SpanKindInternal,
					code: ptrace.StatusCodeOk, start: 1795000000_100123000, end: 1795000001_250000000, attrs: map[string]any{"user.id": nil}},
				{spanID: "c1b2c3d4e5f60718", parentID: "b1b2c3d4e5f60718", traceID: staticTrace, name: "SELECT 1", kind: ptrace.SpanKindClient,
					code: ptrace.StatusCodeError, message: "internal_error", start: 1795000000_200000000, end: 1795000000_300000000},
				{spanID: "d1b2c3d4e5f60718", parentID: "a1b2c3d4e5f60718", traceID: staticTrace, name: "http.client", kind: ptrace.SpanKindClient,
					start: unix("2026-11-24T12:00:00.5Z"), end: unix("2026-11-24T12:00:00.75Z")},
			},
		},
		{
			file:   "spans_v2.json",
			decode: sentrytrace.DecodeSpans,
			resource: map[string]any{"service.name": "checkout", "service.version": "checkout@1.2.3", "deployment.environment.name": "e2e",
				"sentry.platform": "node", "telemetry.sdk.name": "sentry.javascript.node", "telemetry.sdk.version": "11.1.0"},
			spans: []wantSpan{
				{spanID: "e1b2c3d4e5f60718", traceID: streamTrace, name: "e2e-job", kind: ptrace.SpanKindInternal, code: ptrace.StatusCodeOk,
					start: 1795000010_500000000, end: 1795000012_750000000,
					attrs: map[string]any{"sentry.op": "function", "sentry.profiler_id": "6b2c7ef8a32d4e6fb1c0d9e8f7a6b5c4", "thread.id": "0",
						"thread.name": "main", "sentry.sample_rate": int64(1), "sentry.exclusive_time": 12.5, "cached": false}},
				{spanID: "f1b2c3d4e5f60718", parentID: "e1b2c3d4e5f60718", traceID: streamTrace, name: "queue.publish", kind: ptrace.SpanKindProducer,
					code: ptrace.StatusCodeError, message: "error", start: 1795000011_000000000, end: 1795000011_500000000,
					attrs: map[string]any{"messaging.destination.name": "jobs", "absent": nil, "sentry.status": "error"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "traces", tt.file))
			require.NoError(t, err)
			seg, err := tt.decode(data)
			require.NoError(t, err)
			td := ptrace.NewTraces()
			require.Equal(t, len(tt.spans), AppendTraces(td, seg, tt.opts))
			require.Equal(t, 1, td.ResourceSpans().Len())
			rs := td.ResourceSpans().At(0)
			assertAttrs(t, rs.Resource().Attributes(), tt.resource, "resource")
			spans := rs.ScopeSpans().At(0).Spans()
			require.Equal(t, len(tt.spans), spans.Len())
			for i, want := range tt.spans {
				got := spans.At(i)
				assert.Equal(t, want.spanID, got.SpanID().String(), "span %d", i)
				assert.Equal(t, want.parentID, got.ParentSpanID().String(), "span %d parent", i)
				assert.Equal(t, want.traceID, got.TraceID().String(), "span %d trace", i)
				assert.Equal(t, want.name, got.Name(), "span %d name", i)
				assert.Equal(t, want.kind, got.Kind(), "span %d kind", i)
				assert.Equal(t, want.code, got.Status().Code(), "span %d status", i)
				assert.Equal(t, want.message, got.Status().Message(), "span %d status message", i)
				assert.Equal(t, want.start, int64(got.StartTimestamp()), "span %d start", i)
				assert.Equal(t, want.end, int64(got.EndTimestamp()), "span %d end", i)
				assertAttrs(t, got.Attributes(), want.attrs, want.name)
			}
		})
	}
}

func assertAttrs(t *testing.T, attrs pcommon.Map, want map[string]any, where string) {
	t.Helper()
	for k, w := range want {
		v, ok := attrs.Get(k)
		if w == nil {
			assert.False(t, ok, "%s: %s should be absent", where, k)
			continue
		}
		if assert.True(t, ok, "%s: %s is missing", where, k) {
			assert.Equal(t, w, v.AsRaw(), "%s: %s", where, k)
		}
	}
}

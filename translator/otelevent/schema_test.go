package otelevent

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryschema"
)

// TestEventsValidateAgainstSentrySchema checks every kind of event this
// package writes against Sentry's published event schema
// (internal/sentryschema says where it is read from).
func TestEventsValidateAgainstSentrySchema(t *testing.T) {
	schema := sentryschema.Event(t)
	var events []Event
	collect := func(ev Event) { events = append(events, ev) }

	full := EventOptions{InAppPrefixes: []string{"com.shop."}, TagAttributes: []string{"tenant"}, ErrorSpans: true,
		LogMessageMinSeverity: plog.SeverityNumberWarn}
	for _, fill := range []func(plog.LogRecord){
		func(lr plog.LogRecord) { // Java trace, trace context, tags, typed extra
			lr.SetSeverityNumber(plog.SeverityNumberError)
			lr.SetTraceID(testTraceID)
			lr.SetSpanID(testSpanID)
			lr.Body().SetStr("placing order failed")
			lr.Attributes().PutStr("exception.type", "java.lang.IllegalStateException")
			lr.Attributes().PutStr("exception.message", "order 17 has no lines")
			lr.Attributes().PutStr("exception.stacktrace", javaTrace)
			lr.Attributes().PutStr("tenant", "acme")
			lr.Attributes().PutBool("exception.escaped", true)
			lr.Attributes().PutInt("attempt", 3)
			lr.Attributes().PutDouble("ratio", 0.5)
			lr.Attributes().PutEmptySlice("ids").AppendEmpty().SetStr("a")
			lr.Attributes().PutEmptyMap("nested").PutStr("k", "v")
		},
		func(lr plog.LogRecord) { lr.Attributes().PutStr("exception.message", "no type") },
		func(lr plog.LogRecord) { lr.SetSeverityNumber(plog.SeverityNumberWarn); lr.Body().SetStr("a message") },
		func(lr plog.LogRecord) { // the receiver's sentry.exception
			lr.Attributes().PutStr("exception.type", "Error")
			vals := lr.Attributes().PutEmptyMap("sentry.exception").PutEmptySlice("values")
			v := vals.AppendEmpty().SetEmptyMap()
			v.PutStr("type", "Error")
			v.PutStr("value", "boom")
			fr := v.PutEmptyMap("stacktrace").PutEmptySlice("frames").AppendEmpty().SetEmptyMap()
			fr.PutStr("function", "main")
			fr.PutInt("lineno", 3)
			fr.PutBool("in_app", true)
		},
	} {
		if drops := FromLogs(logsWith(fill), full, collect); len(drops) > 0 {
			t.Fatalf("drops: %+v", drops)
		}
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	testResource(rs.Resource())
	rs.Resource().Attributes().PutStr("process.runtime.name", "OpenJDK Runtime Environment")
	rs.Resource().Attributes().PutStr("os.type", "linux")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("GET /")
	span.SetTraceID(testTraceID)
	span.SetSpanID(testSpanID)
	span.SetParentSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
	span.Status().SetCode(ptrace.StatusCodeError)
	ev := span.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "E")
	ev.Attributes().PutStr("exception.stacktrace", javaTrace)
	failed := rs.ScopeSpans().At(0).Spans().AppendEmpty()
	failed.Status().SetCode(ptrace.StatusCodeError)
	FromTraces(td, full, collect)

	if len(events) != 6 {
		t.Fatalf("got %d events, want 6", len(events))
	}
	for i, ev := range events {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(ev.Payload))
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("event %d does not validate: %v\n%s", i, err, ev.Payload)
		}
	}
	t.Logf("%d events valid against relay/event.schema.json", len(events))
}

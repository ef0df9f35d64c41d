package sentryevent

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// Events as @sentry/node 11.1.0 sent them (captureMessage and a
// captureException with a cause, inside a span, sendDefaultPii on),
// captured from the SDK.
func TestCapturedNode11(t *testing.T) {
	tests := []struct {
		file, body string
		severity   plog.SeverityNumber
		excType    string // "" : no exception.* attributes
		stackStart string
	}{
		{"node11_captured_event_1.json", "order 4711 shipped", plog.SeverityNumberInfo, "", ""},
		{"node11_captured_event_2.json", "TypeError: could not load order 4711", plog.SeverityNumberError, "TypeError",
			"TypeError: could not load order 4711\n    at ? (/srv/shop/app.js:17:40)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lr := appendOne(t, readTestdata(t, tt.file), sentrysignal.Options{})
			if lr.Body().Str() != tt.body || lr.SeverityNumber() != tt.severity {
				t.Errorf("body %q severity %v", lr.Body().Str(), lr.SeverityNumber())
			}
			if lr.TraceID().String() != "f2383fbd04214115a8ddb090beaffebd" || lr.SpanID().String() != "b041fbb7f99f4835" {
				t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
			}
			typ, has := lr.Attributes().Get("exception.type")
			if has != (tt.excType != "") || typ.Str() != tt.excType {
				t.Errorf("exception.type %q present=%v", typ.Str(), has)
			}
			stack, _ := lr.Attributes().Get("exception.stacktrace")
			if !strings.HasPrefix(stack.Str(), tt.stackStart) {
				t.Errorf("stack trace starts %.120q", stack.Str())
			}
			if tt.excType != "" && !strings.Contains(stack.Str(), "\nCaused by: Error: connect ECONNREFUSED 127.0.0.1:5432\n") {
				t.Errorf("the cause is not in the stack trace: %s", stack.Str())
			}
			if _, ok := lr.Attributes().Get("user.email"); ok {
				t.Error("user.email without include_user_data")
			}
		})
	}
}

package sentryevent

import (
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

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
			lr := appendOne(t, signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{})
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

// /store/ bodies as sentry-python 1.9.10 (Debian's python3-sentry-sdk)
// sent them: two exceptions (the second chained "from" a KeyError), a
// captured message, and a logging error with a template and params only.
func TestCapturedPython1910(t *testing.T) {
	tests := []struct {
		file, body, excType, template string
		severity                      plog.SeverityNumber
	}{
		{"python1910_captured_store_1.json", "ZeroDivisionError: division by zero", "ZeroDivisionError", "", plog.SeverityNumberError},
		{"python1910_captured_store_2.json", "ValueError: could not load order 4711", "ValueError", "", plog.SeverityNumberError},
		{"python1910_captured_store_3.json", "nightly export done", "", "", plog.SeverityNumberInfo},
		{"python1910_captured_store_4.json", "loading order 4711 failed", "", "loading order %s failed", plog.SeverityNumberError},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lr := appendOne(t, signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{})
			typ, _ := lr.Attributes().Get("exception.type")
			template, _ := lr.Attributes().Get(AttrMessageTemplate)
			if lr.Body().Str() != tt.body || typ.Str() != tt.excType || template.Str() != tt.template || lr.SeverityNumber() != tt.severity {
				t.Errorf("body %q type %q template %q severity %v", lr.Body().Str(), typ.Str(), template.Str(), lr.SeverityNumber())
			}
			if _, ok := lr.Attributes().Get("sentry._meta"); tt.excType != "" && !ok {
				t.Error("_meta (Sentry's trimming notes) not kept")
			}
			if v, ok := lr.Attributes().Get("sentry.exception"); ok && strings.Contains(v.AsString(), `"vars"`) {
				t.Error("frame vars kept without include_user_data")
			}
		})
	}
}

// Events as sentry-python 2.68.0 sent them inside a span (a logging error
// whose logentry carries formatted text, an exception, a message).
func TestCapturedPython268(t *testing.T) {
	tests := []struct{ file, body, excType string }{
		{"python268_captured_event_1.json", "export failed", ""},
		{"python268_captured_event_2.json", "ZeroDivisionError: division by zero", "ZeroDivisionError"},
		{"python268_captured_event_3.json", "nightly export done", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lr := appendOne(t, signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{})
			typ, _ := lr.Attributes().Get("exception.type")
			if lr.Body().Str() != tt.body || typ.Str() != tt.excType {
				t.Errorf("body %q type %q", lr.Body().Str(), typ.Str())
			}
			if lr.TraceID().String() != "99ed33a79c814173b81853a731fd3e05" || lr.SpanID().String() != "89b62d52a3d626f1" {
				t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
			}
			if _, ok := lr.Attributes().Get(AttrMessageTemplate); ok {
				t.Error("a template that equals the text is repeated")
			}
		})
	}
}

// An unhandled error as @sentry/browser 11.1.0 sent it from headless
// Chromium (sendDefaultPii on: the request carries the user agent).
func TestCapturedBrowser11(t *testing.T) {
	payload := signaltest.ReadTestdata(t, "browser11_captured_event_1.json")
	lr := appendOne(t, payload, sentrysignal.Options{})
	if lr.Body().Str() != "ReferenceError: checkout is not defined" || lr.SeverityNumber() != plog.SeverityNumberError {
		t.Errorf("body %q severity %v", lr.Body().Str(), lr.SeverityNumber())
	}
	if lr.TraceID().String() != "5b762c3da0694d2896d2f67abfc7f951" || lr.SpanID().String() != "8c5139f201ab02fa" {
		t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
	}
	if _, ok := lr.Attributes().Get("url.full"); ok {
		t.Error("request kept without include_user_data")
	}
	with := appendOne(t, payload, sentrysignal.Options{IncludeUserData: true})
	ua, ok := with.Attributes().Get("http.request.header.user-agent")
	if !ok || !strings.Contains(ua.Slice().At(0).Str(), "HeadlessChrome") {
		t.Errorf("user agent %v", ua.AsRaw())
	}
	if u, _ := with.Attributes().Get("url.full"); u.Str() != "http://127.0.0.1:18935/index.html" {
		t.Errorf("url.full %q", u.Str())
	}
}

// Events as sentry-go 0.50.0 sent them inside a transaction: a message
// (with the capturing goroutine's stack in "threads") and an error wrapped
// with %w (two chained exceptions, the cause's source "unwrap").
func TestCapturedGo050(t *testing.T) {
	msg := appendOne(t, signaltest.ReadTestdata(t, "go050_captured_event_1.json"), sentrysignal.Options{})
	if msg.Body().Str() != "order 4711 shipped" || msg.SeverityNumber() != plog.SeverityNumberInfo {
		t.Errorf("message %q %v", msg.Body().Str(), msg.SeverityNumber())
	}
	if _, ok := msg.Attributes().Get("sentry.threads"); !ok {
		t.Error("threads not kept")
	}
	lr := appendOne(t, signaltest.ReadTestdata(t, "go050_captured_event_2.json"), sentrysignal.Options{})
	typ, _ := lr.Attributes().Get("exception.type")
	stack, _ := lr.Attributes().Get("exception.stacktrace")
	if typ.Str() != "*fmt.wrapError" || !strings.Contains(stack.Str(), "\nCaused by: *errors.errorString: connect ECONNREFUSED") {
		t.Errorf("type %q stack %q", typ.Str(), stack.Str())
	}
	if lr.TraceID().String() != "eaf65f5980dd8c869554c5f53c075059" || lr.SpanID().String() != "6c2578a6975db01e" {
		t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
	}
	if uint64(lr.Timestamp()) != 1795646962063439917 {
		t.Errorf("timestamp %d: nanoseconds of the RFC 3339 time lost", lr.Timestamp())
	}
}

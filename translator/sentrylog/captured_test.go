package sentrylog

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// A log container as @sentry/node 11.1.0 sent it (console integration and
// Sentry.logger, sendDefaultPii on), captured from the SDK.
func TestCapturedNode11(t *testing.T) {
	payload := signaltest.ReadTestdata(t, "node11_captured_logs_1.json")
	tests := []struct {
		body     string
		severity plog.SeverityNumber
		template string
	}{
		{"loading order %d 4711", 10, ""}, // console.log with a format string: unformatted, no template
		{"order 4711 shipped true", 10, "order {} {} {}"},
		{"checkout took 12.5 ms", 13, "checkout took %s ms"},
	}
	for _, opts := range []sentrysignal.Options{{}, {IncludeUserData: true}} {
		dst := plog.NewLogRecordSlice()
		if n, err := AppendLogs(payload, opts, dst); n != 3 || err != nil {
			t.Fatalf("AppendLogs = %d, %v", n, err)
		}
		for i, tt := range tests {
			lr := dst.At(i)
			template, _ := lr.Attributes().Get("sentry.message.template")
			if lr.Body().Str() != tt.body || lr.SeverityNumber() != tt.severity || template.Str() != tt.template {
				t.Errorf("[%d] %q %v %q", i, lr.Body().Str(), lr.SeverityNumber(), template.Str())
			}
			// the span comes only from sentry.trace.parent_span_id
			if lr.SpanID().String() != "b041fbb7f99f4835" || lr.TraceID().String() != "f2383fbd04214115a8ddb090beaffebd" {
				t.Errorf("[%d] trace %s span %s", i, lr.TraceID(), lr.SpanID())
			}
			// an integer attribute stays an Int (node numbers logs within a millisecond)
			if seq, ok := lr.Attributes().Get("sentry.timestamp.sequence"); !ok || seq.Type() != pcommon.ValueTypeInt {
				t.Errorf("[%d] sequence %v", i, seq.AsRaw())
			}
			if _, has := lr.Attributes().Get("user.email"); has != opts.IncludeUserData {
				t.Errorf("[%d] user.email present=%v with include_user_data=%v", i, has, opts.IncludeUserData)
			}
		}
		if uint64(dst.At(0).Timestamp()) != 1795646059852734000 {
			t.Errorf("timestamp %d: microseconds lost", dst.At(0).Timestamp())
		}
	}
}

// A log container as sentry-python 2.68.0 sent it (sentry_sdk.logger
// inside a span): the span is a top-level span_id, the severity only the
// level (and Python's own sentry.severity_* attributes).
func TestCapturedPython268(t *testing.T) {
	dst := plog.NewLogRecordSlice()
	if n, err := AppendLogs(signaltest.ReadTestdata(t, "python268_captured_log_1.json"), sentrysignal.Options{}, dst); n != 1 || err != nil {
		t.Fatalf("AppendLogs = %d, %v", n, err)
	}
	lr := dst.At(0)
	if lr.Body().Str() != "disk 91% full" || lr.SeverityNumber() != plog.SeverityNumberWarn || lr.SeverityText() != "warn" {
		t.Errorf("%q %v %q", lr.Body().Str(), lr.SeverityNumber(), lr.SeverityText())
	}
	if lr.SpanID().String() != "89b62d52a3d626f1" || lr.TraceID().String() != "99ed33a79c814173b81853a731fd3e05" {
		t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
	}
	if v, _ := lr.Attributes().Get("sentry.message.parameter.pct"); v.Int() != 91 {
		t.Errorf("named parameter %v", v.AsRaw())
	}
}

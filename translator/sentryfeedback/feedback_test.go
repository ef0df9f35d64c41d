package sentryfeedback

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func feedbackRecord(t *testing.T, opts sentrysignal.Options) plog.LogRecord {
	t.Helper()
	dst := plog.NewLogRecordSlice()
	if n, err := AppendFeedback(signaltest.ReadTestdata(t, "node11_feedback.json"), opts, dst); n != 1 || err != nil {
		t.Fatalf("AppendFeedback = %d, %v", n, err)
	}
	return dst.At(0)
}

func TestFeedback(t *testing.T) {
	lr := feedbackRecord(t, sentrysignal.Options{})
	if lr.Body().Str() != "The pay button does nothing" || lr.EventName() != EventFeedback || lr.SeverityNumber() != plog.SeverityNumberInfo {
		t.Errorf("record %q %q %v", lr.Body().Str(), lr.EventName(), lr.SeverityNumber())
	}
	if lr.TraceID().String() != "2c9f4e8a1b7d4f60a3e5c7b9d1f20486" || lr.SpanID().String() != "8a1b2c3d4e5f6071" {
		t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
	}
	get := func(lr plog.LogRecord, k string) any {
		v, ok := lr.Attributes().Get(k)
		if !ok {
			return nil
		}
		return v.AsRaw()
	}
	for k, want := range map[string]any{
		AttrAssociatedEventID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "log.record.uid": "e1d2c3b4a5f60718293a4b5c6d7e8f90",
		"sentry.tags.region": "eu-1", "sentry.type": "feedback", "user.email": nil,
	} {
		if got := get(lr, k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	fb := get(lr, "sentry.contexts").(map[string]any)["feedback"].(map[string]any)
	if fb["contact_email"] != nil || fb["name"] != nil || fb["url"] != "http://localhost:8080/cart" {
		t.Errorf("feedback context without personal data: %v", fb)
	}

	with := feedbackRecord(t, sentrysignal.Options{IncludeUserData: true})
	fb = get(with, "sentry.contexts").(map[string]any)["feedback"].(map[string]any)
	if fb["contact_email"] != "ada@example.com" || fb["name"] != "Ada" || get(with, "user.id") != "u-17" {
		t.Errorf("personal data missing with include_user_data: %v", fb)
	}
}

// The feedback's members read back from the record: message from the
// body, the rest from the contexts, the link from the attribute.
func TestFeedbackRoundTrip(t *testing.T) {
	lr := feedbackRecord(t, sentrysignal.Options{IncludeUserData: true})
	v, _ := lr.Attributes().Get("sentry.contexts")
	back := v.Map().AsRaw()["feedback"].(map[string]any)
	back["message"] = lr.Body().Str()
	id, _ := lr.Attributes().Get(AttrAssociatedEventID)
	back["associated_event_id"] = id.Str()
	want := map[string]any{"contact_email": "ada@example.com", "name": "Ada", "message": "The pay button does nothing",
		"url": "http://localhost:8080/cart", "source": "api", "associated_event_id": "0f1e2d3c4b5a69788796a5b4c3d2e1f0"}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("read back %v", back)
	}
}

// The user report is as sentry-python 1.9.10 sent it through its Envelope
// type (captured).
func TestUserReport(t *testing.T) {
	for _, opts := range []sentrysignal.Options{{}, {IncludeUserData: true}} {
		dst := plog.NewLogRecordSlice()
		if n, err := AppendUserReport(signaltest.ReadTestdata(t, "python1910_captured_user_report.json"), opts, dst); n != 1 || err != nil {
			t.Fatalf("AppendUserReport = %d, %v", n, err)
		}
		lr := dst.At(0)
		want := map[string]any{AttrAssociatedEventID: "c0ffee00c0ffee00c0ffee00c0ffee00"}
		if opts.IncludeUserData {
			want["user.full_name"], want["user.email"] = "Jane Roe", "jane@example.com"
		}
		if got := lr.Attributes().AsRaw(); !reflect.DeepEqual(got, want) {
			t.Errorf("attributes %v, want %v", got, want)
		}
		if lr.Body().Str() != "It crashed when I clicked export." || lr.EventName() != EventUserReport {
			t.Errorf("record %q %q", lr.Body().Str(), lr.EventName())
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		item, payload, field string
	}{
		{ItemFeedback, `{"contexts":{"feedback":{}}}`, "contexts.feedback.message"},
		{ItemFeedback, `{"event_id":"x","contexts":{"feedback":{"message":"m"}}}`, "event_id"},
		{ItemFeedback, `[`, ""},
		{ItemUserReport, `{"comments":"c"}`, "event_id"},
		{ItemUserReport, `[]`, ""},
	}
	for _, tt := range tests {
		dst := plog.NewLogRecordSlice()
		var n int
		var err error
		if tt.item == ItemFeedback {
			n, err = AppendFeedback([]byte(tt.payload), sentrysignal.Options{}, dst)
		} else {
			n, err = AppendUserReport([]byte(tt.payload), sentrysignal.Options{}, dst)
		}
		var de *sentrysignal.DecodeError
		if n != 0 || dst.Len() != 0 || !errors.As(err, &de) || de.Item != tt.item || de.Field != tt.field {
			t.Errorf("%s %s: %d, %v", tt.item, tt.payload, n, err)
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add(signaltest.ReadTestdata(f, "node11_feedback.json"))
	f.Add(signaltest.ReadTestdata(f, "python1910_captured_user_report.json"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, appendItem := range []func([]byte, sentrysignal.Options, plog.LogRecordSlice) (int, error){AppendFeedback, AppendUserReport} {
			dst := plog.NewLogRecordSlice()
			n, err := appendItem(payload, sentrysignal.Options{MaxDepth: 3}, dst)
			var de *sentrysignal.DecodeError
			if (err != nil && (!errors.As(err, &de) || n != 0 || dst.Len() != 0)) || (err == nil && (n != 1 || dst.Len() != 1)) {
				t.Fatalf("n=%d records=%d err=%v", n, dst.Len(), err)
			}
		}
	})
}

// Feedback as @sentry/node 11.1.0 sent it (captureFeedback inside a span,
// about the event captured just before), captured from the SDK.
func TestCapturedNode11(t *testing.T) {
	dst := plog.NewLogRecordSlice()
	if n, err := AppendFeedback(signaltest.ReadTestdata(t, "node11_captured_feedback_1.json"), sentrysignal.Options{}, dst); n != 1 || err != nil {
		t.Fatalf("AppendFeedback = %d, %v", n, err)
	}
	lr := dst.At(0)
	id, _ := lr.Attributes().Get(AttrAssociatedEventID)
	if lr.Body().Str() != "The pay button does nothing" || id.Str() != "dd3d430339a9416c8c56e4d68fd04f3f" {
		t.Errorf("body %q associated %q", lr.Body().Str(), id.Str())
	}
	if lr.TraceID().String() != "f2383fbd04214115a8ddb090beaffebd" || lr.SpanID().String() != "b041fbb7f99f4835" {
		t.Errorf("trace %s span %s", lr.TraceID(), lr.SpanID())
	}
	if _, ok := lr.Attributes().Get("user.email"); ok {
		t.Error("user.email without include_user_data")
	}
}

// A feedback event that also has a message keeps it beside the feedback.
func TestFeedbackWithMessage(t *testing.T) {
	payload := `{"message":"User feedback","contexts":{"feedback":{"message":"Too slow"}}}`
	dst := plog.NewLogRecordSlice()
	if n, err := AppendFeedback([]byte(payload), sentrysignal.Options{}, dst); n != 1 || err != nil {
		t.Fatalf("AppendFeedback = %d, %v", n, err)
	}
	msg, _ := dst.At(0).Attributes().Get(AttrEventMessage)
	if dst.At(0).Body().Str() != "Too slow" || msg.Str() != "User feedback" {
		t.Errorf("body %q event message %q", dst.At(0).Body().Str(), msg.Str())
	}
}

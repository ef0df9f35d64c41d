package sentryfeedback

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// Item types this package reads.
const (
	ItemFeedback   = "feedback"
	ItemUserReport = "user_report"
)

// Event names of the records.
const (
	EventFeedback   = "sentry.feedback"
	EventUserReport = "sentry.user_report"
)

// Attribute keys.
const (
	// AttrAssociatedEventID is the event the feedback is about.
	AttrAssociatedEventID = "sentry.feedback.associated_event_id"
	// AttrEventMessage is the feedback event's own message, when it has
	// one: the body holds the feedback.
	AttrEventMessage = "sentry.feedback.event_message"
)

// personalFeedback are the members of contexts.feedback that identify the
// person who wrote it.
var personalFeedback = [...]string{"contact_email", "name"}

// DecodeFeedback reads a "feedback" item; it fails as sentryevent.Decode
// does, and when contexts.feedback has no message.
func DecodeFeedback(payload []byte, opts sentrysignal.Options) (*sentryevent.Event, error) {
	ev, err := sentryevent.DecodeItem(ItemFeedback, payload, opts)
	if err != nil {
		return nil, err
	}
	if sentrysignal.Str(feedbackContext(ev), "message") == "" {
		return nil, sentrysignal.PayloadError(ItemFeedback, "contexts.feedback.message", "missing", nil)
	}
	return ev, nil
}

// FeedbackLogs is the router's contract for a "feedback" item: the
// resource of its event fields, the event it is about, and its one record.
func FeedbackLogs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	ev, err := DecodeFeedback(payload, opts)
	if err != nil {
		return sentrysignal.Logs{}, err
	}
	about, _ := sentrysignal.EventID(sentrysignal.Str(feedbackContext(ev), "associated_event_id"))
	return sentrysignal.Logs{
		Facts: sentrysignal.Facts{Resource: ev.Resource, AboutEventID: about},
		Append: func(dst plog.LogRecordSlice) int {
			PutFeedback(dst.AppendEmpty(), ev, opts)
			return 1
		},
	}, nil
}

// feedbackContext is contexts.feedback.
func feedbackContext(ev *sentryevent.Event) map[string]any {
	return sentrysignal.Obj(sentrysignal.Obj(ev.Doc, "contexts"), "feedback")
}

// PutFeedback writes a decoded feedback event into lr.
func PutFeedback(lr plog.LogRecord, ev *sentryevent.Event, opts sentrysignal.Options) {
	contexts := sentrysignal.Obj(ev.Doc, "contexts")
	fb := sentrysignal.Obj(contexts, "feedback")
	if !opts.IncludeUserData {
		fb = withoutPersonal(fb)
		contexts = withMember(contexts, "feedback", fb)
		ev = &sentryevent.Event{Doc: withMember(ev.Doc, "contexts", contexts), EventID: ev.EventID,
			Timestamp: ev.Timestamp, TraceID: ev.TraceID, SpanID: ev.SpanID, Resource: ev.Resource}
	}
	ev.PutLogRecord(lr, opts)
	lr.SetEventName(EventFeedback)
	// "message" / "logentry" of the event itself, which the body gives way to
	if text := lr.Body().Str(); text != "" && len(sentrysignal.Values(ev.Doc["exception"])) == 0 {
		lr.Attributes().PutStr(AttrEventMessage, text)
	}
	// contexts.feedback.message → body
	lr.Body().SetStr(sentrysignal.Str(fb, "message"))
	// contexts.feedback.associated_event_id
	if id, ok := sentrysignal.EventID(sentrysignal.Str(fb, "associated_event_id")); ok {
		lr.Attributes().PutStr(AttrAssociatedEventID, id)
	}
}

// withoutPersonal copies contexts.feedback without the writer's contact.
func withoutPersonal(fb map[string]any) map[string]any {
	out := make(map[string]any, len(fb))
	for k, v := range fb {
		out[k] = v
	}
	for _, k := range personalFeedback {
		delete(out, k)
	}
	return out
}

// withMember copies obj with obj[k] = v, leaving obj as it was.
func withMember(obj map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(obj)+1)
	for key, val := range obj {
		out[key] = val
	}
	out[k] = v
	return out
}

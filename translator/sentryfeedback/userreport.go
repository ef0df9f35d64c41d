package sentryfeedback

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/plog"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// AttrPrefix names the members of a user report this version does not
// know: "sentry.payload.<member>".
const AttrPrefix = "sentry.payload."

// UserReportLogs is the router's contract for a "user_report" item: the
// event it is about, and its one record. A report names no program.
func UserReportLogs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	fail := func(field, reason string, err error) (sentrysignal.Logs, error) {
		return sentrysignal.Logs{}, sentrysignal.PayloadError(ItemUserReport, field, reason, err)
	}
	if err := opts.CheckSize(ItemUserReport, payload); err != nil {
		return sentrysignal.Logs{}, err
	}
	x, err := sentrysignal.DecodeAny(payload)
	if err != nil {
		return fail("", "not JSON", err)
	}
	doc, ok := x.(map[string]any)
	if !ok {
		return fail("", "not a JSON object", nil)
	}
	eventID, ok := sentrysignal.EventID(sentrysignal.Str(doc, "event_id"))
	if !ok {
		return fail("event_id", "not a 32-hex-digit id", nil)
	}
	return sentrysignal.Logs{
		Facts: sentrysignal.Facts{AboutEventID: eventID},
		Append: func(dst plog.LogRecordSlice) int {
			putUserReport(dst.AppendEmpty(), doc, eventID, opts.WithDefaults())
			return 1
		},
	}, nil
}

var userReportMembers = map[string]bool{"event_id": true, "comments": true, "name": true, "email": true}

func putUserReport(lr plog.LogRecord, doc map[string]any, eventID string, opts sentrysignal.Options) {
	l := sentrysignal.NewLimiter(opts)
	lr.SetEventName(EventUserReport)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	// "comments" → body
	lr.Body().SetStr(sentrysignal.Str(doc, "comments"))
	attrs := lr.Attributes()
	// "event_id": the event the report is about
	attrs.PutStr(AttrAssociatedEventID, eventID)
	// "name", "email": personal data
	if opts.IncludeUserData {
		if s := sentrysignal.Str(doc, "name"); s != "" {
			attrs.PutStr(string(semconv.UserFullNameKey), s)
		}
		if s := sentrysignal.Str(doc, "email"); s != "" {
			attrs.PutStr(string(semconv.UserEmailKey), s)
		}
	}
	// any other member → sentry.payload.<member>
	var others []string
	for k, v := range doc {
		if v != nil && !userReportMembers[k] {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	for _, k := range others {
		l.PutAny(attrs, AttrPrefix+k, doc[k], opts.MaxDepth)
	}
	// what the map limits cut
	lr.SetDroppedAttributesCount(l.DroppedCount())
}

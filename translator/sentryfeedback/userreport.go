package sentryfeedback

import (
	"sort"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// AttrPrefix names the members of a user report this version does not
// know: "sentry.payload.<member>".
const AttrPrefix = sentryattr.PayloadPrefix

// UserReportLogs is the router's contract for a "user_report" item: the
// event it is about, and its one record. A report names no program.
func UserReportLogs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	doc, err := sentrysignal.DecodeObject(ItemUserReport, payload, opts)
	if err != nil {
		return sentrysignal.Logs{}, err
	}
	eventID, ok := sentrysignal.EventID(sentrysignal.Str(doc, "event_id"))
	if !ok {
		return sentrysignal.Logs{}, sentrysignal.PayloadError(ItemUserReport, "event_id", "not a 32-hex-digit id", nil)
	}
	return sentrysignal.Logs{
		Facts: sentrysignal.Facts{AboutEventID: eventID},
		Append: func(dst plog.LogRecordSlice) int {
			putUserReport(dst.AppendEmpty(), doc, eventID, opts.WithDefaults())
			return 1
		},
	}, nil
}

// putReporter writes who wrote the report: "name", "email".
func putReporter(attrs pcommon.Map, doc map[string]any) {
	if s := sentrysignal.Str(doc, "name"); s != "" {
		attrs.PutStr(string(semconv.UserFullNameKey), s)
	}
	if s := sentrysignal.Str(doc, "email"); s != "" {
		attrs.PutStr(string(semconv.UserEmailKey), s)
	}
}

// otherMembers are the members of a user report no block maps, in key
// order.
func otherMembers(doc map[string]any) []string {
	var others []string
	for k, v := range doc {
		if v != nil && !userReportMembers[k] {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	return others
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
		putReporter(attrs, doc)
	}
	// any other member → sentry.payload.<member>
	for _, k := range otherMembers(doc) {
		l.PutAny(attrs, AttrPrefix+k, doc[k], opts.MaxDepth)
	}
	// what the map limits cut
	lr.SetDroppedAttributesCount(l.DroppedCount())
}

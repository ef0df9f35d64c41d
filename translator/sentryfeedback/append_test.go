package sentryfeedback

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call, as the receiver once did; the
// receiver now decodes first, to read the payload's resource too.

// AppendFeedback appends the LogRecord of one "feedback" item: the event
// as sentryevent maps it (user, tags, contexts, trace), with the feedback's
// message as body. On error it returns a *sentrysignal.DecodeError and
// appends nothing.
func AppendFeedback(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	ev, err := DecodeFeedback(payload, opts)
	if err != nil {
		return 0, err
	}
	PutFeedback(dst.AppendEmpty(), ev, opts)
	return 1, nil
}

// AppendUserReport appends the LogRecord of one "user_report" item; on
// error it returns a *sentrysignal.DecodeError and appends nothing.
func AppendUserReport(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	logs, err := UserReportLogs(payload, opts)
	if err != nil {
		return 0, err
	}
	return logs.Append(dst), nil
}

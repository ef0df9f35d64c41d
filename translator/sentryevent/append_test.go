package sentryevent

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call, as the receiver once did; the
// receiver now decodes first, to read the payload's resource too.

// AppendLogs decodes one event payload and appends its LogRecord to dst.
// It returns 1, or 0 and a *sentrysignal.DecodeError; on error dst is
// unchanged.
func AppendLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	ev, err := Decode(payload, opts)
	if err != nil {
		return 0, err
	}
	ev.PutLogRecord(dst.AppendEmpty(), opts)
	return 1, nil
}

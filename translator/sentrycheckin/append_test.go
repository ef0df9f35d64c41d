package sentrycheckin

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call, as the receiver once did; the
// receiver now decodes first, to read the payload's resource too.

// AppendLogs decodes one check-in and appends its LogRecord; on error it
// returns a *sentrysignal.DecodeError and appends nothing.
func AppendLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	c, err := Decode(payload, opts)
	if err != nil {
		return 0, err
	}
	c.PutLogRecord(dst.AppendEmpty(), opts)
	return 1, nil
}

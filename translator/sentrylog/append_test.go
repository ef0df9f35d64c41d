package sentrylog

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call; the receiver takes the
// decoder's Logs, to learn the item's resource too.

// AppendLogs appends one LogRecord per log of a "log" item's container
// and returns how many it appended, with Logs's error.
func AppendLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	return appendOf(Logs(payload, opts))(dst)
}

// AppendOTelLog appends the LogRecord of one "otel_log" item.
func AppendOTelLog(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	return appendOf(OTelLogs(payload, opts))(dst)
}

// appendOf appends what a decoder gave, and returns its error.
func appendOf(logs sentrysignal.Logs, err error) func(plog.LogRecordSlice) (int, error) {
	return func(dst plog.LogRecordSlice) (int, error) {
		if logs.Append == nil {
			return 0, err
		}
		return logs.Append(dst), err
	}
}

package sentryevent

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call, by the router's path (Logs).

// AppendLogs decodes one event payload and appends its LogRecord to dst.
// It returns 1, or 0 and a *sentrysignal.DecodeError; on error dst is
// unchanged.
func AppendLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	logs, err := Logs(payload, opts)
	if err != nil {
		return 0, err
	}
	return logs.Append(dst), nil
}

// appendLogsByTree is AppendLogs by the map[string]any tree: Decode and
// PutLogRecord, the reference the router's path is held to.
func appendLogsByTree(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	ev, err := Decode(payload, opts)
	if err != nil {
		return 0, err
	}
	ev.PutLogRecord(dst.AppendEmpty(), opts)
	return 1, nil
}

package sentrysignal

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
)

// Severity maps a Sentry level (of events, breadcrumbs, logs, check-in
// free text) to the OTLP severity number of the same name; unknown levels
// are Unspecified so that the text alone carries them.
func Severity(level string) plog.SeverityNumber {
	switch strings.ToLower(level) {
	case "trace":
		return plog.SeverityNumberTrace
	case "debug":
		return plog.SeverityNumberDebug
	case "info", "log":
		return plog.SeverityNumberInfo
	case "warning", "warn":
		return plog.SeverityNumberWarn
	case "error":
		return plog.SeverityNumberError
	case "fatal", "critical":
		return plog.SeverityNumberFatal
	}
	return plog.SeverityNumberUnspecified
}

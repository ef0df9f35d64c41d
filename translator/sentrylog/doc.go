// Package sentrylog maps Sentry Logs to OTLP log records one to one: the
// "log" envelope item (an {"items": [...]} container of Sentry logs) and
// the older "otel_log" item (one log in OpenTelemetry's JSON form).
// README.md holds the mapping table.
package sentrylog

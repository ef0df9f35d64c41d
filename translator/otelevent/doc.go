// Package otelevent maps OpenTelemetry data to Sentry items, one direction
// only: exceptions recorded on spans (`exception` span events) and in log
// records (`exception.*` attributes) become Sentry error events, and metric
// points become `trace_metric` items. pdata in, Sentry JSON out; nothing is
// sent from here. README.md is the mapping table.
package otelevent

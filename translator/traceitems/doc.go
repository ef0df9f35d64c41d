// Package traceitems turns the trace data of an envelope (a `transaction`
// item or a span v2 `span` container, decoded by translator/sentrytrace as
// a segment of spans) into OpenTelemetry traces (AppendTraces), and gives
// the receiver's span index its view of the spans (IndexSpans: "trace_id",
// "span_id", the profiler, "thread.id", "sentry.segment.id", start and
// end).
package traceitems

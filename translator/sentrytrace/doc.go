// Package sentrytrace reads the trace data of Sentry envelopes: `transaction`
// items (a segment in `contexts.trace`, its children in `spans`) and span
// streaming `span` items (`application/vnd.sentry.items.span.v2+json`). It
// produces Segments, one per transaction item or span container, for the
// translator to map to OTLP spans.
//
// It decodes with encoding/json: trace items are small beside profiles
// (a transaction holds at most 1000 spans), and their `data`/`attributes`
// objects are open-ended, which a generic decoder reads best.
package sentrytrace // import "github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"

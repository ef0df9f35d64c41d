// Package sentrytrace reads the trace data of Sentry envelopes: `transaction`
// items (a segment in `contexts.trace`, its children in `spans`) and span
// streaming `span` items (`application/vnd.sentry.items.span.v2+json`). It
// produces Segments, one per transaction item or span container, for the
// translator to map to OTLP spans; AppendItems decodes an envelope's trace
// items once, into the Items the span index, the traces signal and the
// profile item rules share. Timestamps are read by the one Sentry time
// (translator/internal/sentrytime): a value past int64 nanoseconds refuses
// its item.
//
// It decodes with encoding/json: trace items are small beside profiles
// (a transaction holds at most 1000 spans), and their `data`/`attributes`
// objects are open-ended, which a generic decoder reads best.
package sentrytrace // import "github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"

package sentrysignal

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// The contract of every signal translator: an item type's payload decodes
// to its Facts and a function that appends its records, so that a
// receiver adds an item type with one row naming its decoder, and learns
// who sent the item from the translator, never by reading the records
// back.
type (
	// LogsDecoder reads one item of a logs-signal type. An error that is
	// not a *PartialError means nothing can be appended; with a
	// *PartialError the item's other entries are in the Logs.
	LogsDecoder func(payload []byte, opts Options) (Logs, error)
	// MetricsDecoder is LogsDecoder for the metrics signal.
	MetricsDecoder func(payload []byte, opts Options) (Metrics, error)
)

// Facts is what one item says besides its records.
type Facts struct {
	// Resource is what the payload says of the program that sent it (its
	// release, environment, sdk, contexts, or the sentry.* attributes of
	// its entries), to fill the envelope's resource with.
	Resource sentryresource.Resource
	// EventID is the event the item is: an "event" item's "event_id".
	EventID string
	// AboutEventID is the event a feedback or user report is about.
	AboutEventID string
}

// Logs is one item of the logs signal, read.
type Logs struct {
	Facts
	// Append appends the item's log records to dst and returns how many;
	// it is called once (the records may be moved, not copied).
	Append func(dst plog.LogRecordSlice) int
}

// Metrics is one item of the metrics signal, read.
type Metrics struct {
	Facts
	// Append appends the item's metrics to dst and returns the number of
	// data points; it is called once (the metrics may be moved).
	Append func(dst pmetric.MetricSlice) int
}

// LogsOf is the Logs of records already written: Append moves them.
func LogsOf(facts Facts, records plog.LogRecordSlice) Logs {
	return Logs{Facts: facts, Append: func(dst plog.LogRecordSlice) int {
		n := records.Len()
		records.MoveAndAppendTo(dst)
		return n
	}}
}

// MetricsOf is the Metrics of metrics already written, holding points data
// points: Append moves them.
func MetricsOf(facts Facts, metrics pmetric.MetricSlice, points int) Metrics {
	return Metrics{Facts: facts, Append: func(dst pmetric.MetricSlice) int {
		metrics.MoveAndAppendTo(dst)
		return points
	}}
}

package sentrymetric

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call; the receiver takes the
// decoder's Metrics, to learn the item's resource too.

// AppendMetrics appends the metrics of one "trace_metric" container to dst
// and returns the number of data points appended, with Metrics's error.
func AppendMetrics(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice) (int, error) {
	return appendOf(Metrics(payload, opts))(dst)
}

// AppendStatsd appends the buckets of a "statsd" item.
func AppendStatsd(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice) (int, error) {
	return appendOf(StatsdMetrics(payload, opts))(dst)
}

// appendOf appends what a decoder gave, and returns its error.
func appendOf(metrics sentrysignal.Metrics, err error) func(pmetric.MetricSlice) (int, error) {
	return func(dst pmetric.MetricSlice) (int, error) {
		if metrics.Append == nil {
			return 0, err
		}
		return metrics.Append(dst), err
	}
}

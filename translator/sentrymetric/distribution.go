package sentrymetric

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// putDistribution writes one observed value of a distribution as a delta
// exponential histogram point of count 1 (see sentrysignal.PutObservation).
func putDistribution(dp pmetric.ExponentialHistogramDataPoint, p *point) {
	// "timestamp"
	dp.SetStartTimestamp(p.ts)
	dp.SetTimestamp(p.ts)
	// "value" → count 1, sum, min, max, and its bucket
	sentrysignal.PutObservation(dp, p.value.float())
	putAttributesAndExemplar(dp.Attributes(), dp.Exemplars(), p)
}

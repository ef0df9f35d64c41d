package sentrymetric

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func TestS6Interleaved(t *testing.T) {
	b := &testing.B{}
	payload := metricContainer100(b)
	md := pmetric.NewMetrics()
	AppendMetrics(payload, sentrysignal.Options{}, md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics())
	otlp, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	var ours, theirs time.Duration
	for r := 0; r < 30; r++ {
		s := time.Now()
		for i := 0; i < 100; i++ {
			AppendMetrics(payload, sentrysignal.Options{}, pmetric.NewMetricSlice())
		}
		ours += time.Since(s)
		s = time.Now()
		for i := 0; i < 100; i++ {
			(&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(otlp)
		}
		theirs += time.Since(s)
	}
	t.Logf("ours %v/op, otlp %v/op, ratio otlp/ours %.2f", ours/3000, theirs/3000, float64(theirs)/float64(ours))
}

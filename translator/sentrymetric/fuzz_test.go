package sentrymetric

import (
	"errors"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// FuzzAppendMetrics: the data points appended are the count returned, no
// metric is left without points, errors are typed; nothing panics.
func FuzzAppendMetrics(f *testing.F) {
	f.Add(signaltest.ReadTestdata(f, "node11_metrics.json"))
	f.Add(signaltest.ReadTestdata(f, "python268_metrics.json"))
	f.Add([]byte(`{"items":[{"timestamp":"1","name":"d","type":"distribution","value":-1e308},{"timestamp":1,"name":"d","type":"distribution","value":5e-324}]}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		dst := pmetric.NewMetricSlice()
		n, err := AppendMetrics(payload, sentrysignal.Options{MaxDepth: 3, MaxItems: 50}, dst)
		points := 0
		for _, m := range dst.All() {
			c := pointCount(m)
			if c == 0 {
				t.Fatalf("metric %q without points", m.Name())
			}
			points += c
		}
		if points != n {
			t.Fatalf("returned %d, appended %d points", n, points)
		}
		var pe *sentrysignal.PartialError
		var de *sentrysignal.DecodeError
		if err != nil && !errors.As(err, &pe) && !errors.As(err, &de) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

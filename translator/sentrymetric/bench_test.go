package sentrymetric

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// metricContainer100 is the captured node container repeated to 100
// metrics (a full batch of the JavaScript SDK).
func metricContainer100(b *testing.B) []byte {
	var in struct{ Items []json.RawMessage }
	if err := json.Unmarshal(signaltest.ReadTestdata(b, "node11_captured_metrics_1.json"), &in); err != nil {
		b.Fatal(err)
	}
	items := make([][]byte, 100)
	for i := range items {
		items[i] = in.Items[i%len(in.Items)]
	}
	return append(append([]byte(`{"items":[`), bytes.Join(items, []byte(","))...), "]}"...)
}

// otlpOf is the OTLP protobuf request of the container's metrics, as the
// otlp receiver gets it.
func otlpOf(b *testing.B, payload []byte) []byte {
	md := pmetric.NewMetrics()
	if _, err := AppendMetrics(payload, sentrysignal.Options{}, md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()); err != nil {
		b.Fatal(err)
	}
	otlp, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		b.Fatal(err)
	}
	return otlp
}

// BenchmarkDecodeMetricContainer: the trace_metric decoder against the
// OTLP protobuf decode of the same metrics, the otlp receiver's path.
func BenchmarkDecodeMetricContainer(b *testing.B) {
	payload := metricContainer100(b)
	b.Run("sentrymetric.Metrics", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if n, err := AppendMetrics(payload, sentrysignal.Options{}, pmetric.NewMetricSlice()); err != nil || n != 100 {
				b.Fatal(n, err)
			}
		}
	})
	otlp := otlpOf(b, payload)
	b.Run("otlp-protobuf.UnmarshalMetrics", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(otlp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeMetricContainerInterleaved: the same two decodes
// alternating in batches of 50 within each run, so that both see the same
// machine and the same garbage collector (the sequential sub-benchmarks
// above read each one's own collector pace, and this machine's speed
// drifts between them). It reports the time of each per container and
// otlp/ours, the OTLP decode's share of ours (> 1: ours is faster). Run
// it with GOMAXPROCS=1 to count the collector's work in the time, as a
// collector's CPU does.
func BenchmarkDecodeMetricContainerInterleaved(b *testing.B) {
	payload := metricContainer100(b)
	otlp := otlpOf(b, payload)
	const batch = 50
	var ours, theirs time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		for range batch {
			if n, err := AppendMetrics(payload, sentrysignal.Options{}, pmetric.NewMetricSlice()); err != nil || n != 100 {
				b.Fatal(n, err)
			}
		}
		mid := time.Now()
		for range batch {
			if _, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(otlp); err != nil {
				b.Fatal(err)
			}
		}
		ours, theirs = ours+mid.Sub(start), theirs+time.Since(mid)
	}
	containers := float64(b.N * batch)
	b.ReportMetric(float64(ours.Nanoseconds())/containers, "ours-ns/container")
	b.ReportMetric(float64(theirs.Nanoseconds())/containers, "otlp-ns/container")
	b.ReportMetric(float64(theirs)/float64(ours), "otlp/ours")
}

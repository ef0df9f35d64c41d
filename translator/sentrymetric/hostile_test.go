package sentrymetric

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestHostileAttributeCounts: a metric with 20 000 attributes, or a statsd
// line with 20 000 tags, keeps 1 000 on its data point. Before: pdata's
// key scan made these quadratic (20 000 took ~3 s).
func TestHostileAttributeCounts(t *testing.T) {
	const n = 20_000
	typed := map[string]any{}
	tags := make([]string, 0, n)
	for i := 0; i < n; i++ {
		typed[fmt.Sprintf("a%06d", i)] = map[string]any{"type": "string", "value": "v"}
		tags = append(tags, fmt.Sprintf("t%06d:v", i))
	}
	metric, err := json.Marshal(map[string]any{"items": []any{map[string]any{
		"timestamp": 1.5, "name": "m", "type": "counter", "value": 1, "attributes": typed}}})
	if err != nil {
		t.Fatal(err)
	}
	statsd := []byte("m:1|c|#" + strings.Join(tags, ",") + "|T1795646343")
	tests := []struct {
		name    string
		append  func([]byte, sentrysignal.Options, pmetric.MetricSlice) (int, error)
		payload []byte
	}{
		{"trace_metric attributes", AppendMetrics, metric},
		{"statsd tags", AppendStatsd, statsd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := pmetric.NewMetricSlice()
			cut := &sentrysignal.Truncations{} //new-api
			opts := sentrysignal.Options{}
			opts.Truncations = cut //new-api
			if got, err := tt.append(tt.payload, opts, dst); got != 1 || err != nil {
				t.Fatalf("appended %d, %v", got, err)
			}
			if kept := dst.At(0).Sum().DataPoints().At(0).Attributes().Len(); kept != 1000 {
				t.Errorf("%d attributes kept, want 1000", kept)
			}
			if cut.Attributes != n-1000 { //new-api
				t.Errorf("Truncations.Attributes = %d, want %d", cut.Attributes, n-1000) //new-api
			} //new-api
		})
	}
}

// TestHostileStatsdTimestamp: a T section past 2262 is refused, as every
// Sentry timestamp is. Before, its nanoseconds overflowed an int64:
// T253402300799 (9999-12-31, which the old check allowed) was written as
// 2400-10-18, and T9223372037 as a time Go reads as 1677.
func TestHostileStatsdTimestamp(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want uint64
	}{
		{"m:1|c|T1795646343", true, 1795646343e9},
		{"m:1|c|T9223372035", true, 9223372035e9},
		{"m:1|c|T9223372037", false, 0},
		{"m:1|c|T253402300799", false, 0},
		{"m:1|c|T1.5", false, 0},
	}
	for _, tt := range tests {
		dst := pmetric.NewMetricSlice()
		n, _ := AppendStatsd([]byte(tt.line), sentrysignal.Options{}, dst)
		if (n == 1) != tt.ok {
			t.Errorf("%s: appended %d, want ok %v", tt.line, n, tt.ok)
			continue
		}
		if n == 1 {
			if got := uint64(dst.At(0).Sum().DataPoints().At(0).Timestamp()); got != tt.want {
				t.Errorf("%s: timestamp %d, want %d", tt.line, got, tt.want)
			}
		}
	}
}

// TestHostileDistributionSum: values whose sum passes float64's range
// leave the point without a sum instead of an infinite one.
func TestHostileDistributionSum(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	if n, err := AppendStatsd([]byte("d:1e308:1e308:1|d|T1795646343"), sentrysignal.Options{}, dst); n != 1 || err != nil {
		t.Fatalf("appended %d, %v", n, err)
	}
	dp := dst.At(0).ExponentialHistogram().DataPoints().At(0)
	if dp.HasSum() || dp.Count() != 3 || dp.Max() != 1e308 {
		t.Errorf("sum %v (set %v), count %d, max %v; want no sum, 3, 1e308", dp.Sum(), dp.HasSum(), dp.Count(), dp.Max())
	}
}

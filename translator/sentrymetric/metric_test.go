package sentrymetric

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

func appendAll(t *testing.T, file string) pmetric.MetricSlice {
	t.Helper()
	dst := pmetric.NewMetricSlice()
	if _, err := AppendMetrics(signaltest.ReadTestdata(t, file), sentrysignal.Options{}, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestAppendMetricsShapes(t *testing.T) {
	tests := []struct {
		file  string
		names []string
		types []pmetric.MetricType
		units []string
		// data points per metric
		points []int
	}{
		{"node11_metrics.json", []string{"orders.shipped", "queue.depth", "checkout.duration"},
			[]pmetric.MetricType{pmetric.MetricTypeSum, pmetric.MetricTypeGauge, pmetric.MetricTypeExponentialHistogram},
			[]string{"", "", "ms"}, []int{2, 1, 1}},
		{"python268_metrics.json", []string{"jobs.done", "memory.rss", "export.duration"},
			[]pmetric.MetricType{pmetric.MetricTypeSum, pmetric.MetricTypeGauge, pmetric.MetricTypeExponentialHistogram},
			[]string{"", "MiBy", "s"}, []int{1, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			dst := appendAll(t, tt.file)
			if dst.Len() != len(tt.names) {
				t.Fatalf("%d metrics, want %d", dst.Len(), len(tt.names))
			}
			for i := range tt.names {
				m := dst.At(i)
				if m.Name() != tt.names[i] || m.Type() != tt.types[i] || m.Unit() != tt.units[i] || pointCount(m) != tt.points[i] {
					t.Errorf("[%d] %s %v %q %d points", i, m.Name(), m.Type(), m.Unit(), pointCount(m))
				}
			}
			sum := dst.At(0).Sum()
			if sum.AggregationTemporality() != pmetric.AggregationTemporalityDelta || !sum.IsMonotonic() {
				t.Errorf("counter: %v monotonic %v", sum.AggregationTemporality(), sum.IsMonotonic())
			}
		})
	}
}

func TestCounterPoint(t *testing.T) {
	dp := appendAll(t, "node11_metrics.json").At(0).Sum().DataPoints().At(1)
	if dp.IntValue() != 2 || uint64(dp.Timestamp()) != 1795644001330000000 || dp.StartTimestamp() != dp.Timestamp() {
		t.Errorf("point %d at %d (start %d)", dp.IntValue(), dp.Timestamp(), dp.StartTimestamp())
	}
	region, _ := dp.Attributes().Get("region")
	if _, isLabel := dp.Attributes().Get("sentry.timestamp.sequence"); region.Str() != "us-2" || isLabel {
		t.Errorf("attributes %v", dp.Attributes().AsRaw())
	}
	ex := dp.Exemplars().At(0)
	// An observation's sequence number is its exemplar's, not its series'.
	if seq, _ := ex.FilteredAttributes().Get("sentry.timestamp.sequence"); seq.Int() != 3 {
		t.Errorf("exemplar attributes %v", ex.FilteredAttributes().AsRaw())
	}
	if ex.TraceID().String() != "2c9f4e8a1b7d4f60a3e5c7b9d1f20486" || ex.SpanID().String() != "a1b2c3d4e5f60718" || ex.IntValue() != 2 {
		t.Errorf("exemplar %s %s %d", ex.TraceID(), ex.SpanID(), ex.IntValue())
	}
}

func TestDistributionPoint(t *testing.T) {
	h := appendAll(t, "python268_metrics.json").At(2).ExponentialHistogram()
	if h.AggregationTemporality() != pmetric.AggregationTemporalityDelta {
		t.Error("distribution is not a delta")
	}
	dp := h.DataPoints().At(0)
	if dp.Count() != 1 || dp.Sum() != 1.5 || dp.Min() != 1.5 || dp.Max() != 1.5 || dp.Scale() != sentrysignal.HistogramScale {
		t.Errorf("point count %d sum %v min %v max %v scale %d", dp.Count(), dp.Sum(), dp.Min(), dp.Max(), dp.Scale())
	}
	// the bucket (base^offset, base^(offset+1)] holds the value
	base := math.Exp2(math.Exp2(-sentrysignal.HistogramScale))
	lo, hi := math.Pow(base, float64(dp.Positive().Offset())), math.Pow(base, float64(dp.Positive().Offset()+1))
	if !(lo < 1.5 && 1.5 <= hi) || dp.Positive().BucketCounts().Len() != 1 {
		t.Errorf("1.5 not in bucket (%v, %v]", lo, hi)
	}
	if zero := h.DataPoints().At(1); zero.ZeroCount() != 1 || zero.Positive().BucketCounts().Len() != 0 {
		t.Errorf("zero value: zero count %d", zero.ZeroCount())
	}
}

func TestNegativeCounterIsNotMonotonic(t *testing.T) {
	payload := `{"items":[{"timestamp":1,"name":"c","type":"counter","value":1},{"timestamp":2,"name":"c","type":"counter","value":-1.5},
		{"timestamp":3,"name":"d","type":"distribution","value":-4}]}`
	dst := pmetric.NewMetricSlice()
	if n, err := AppendMetrics([]byte(payload), sentrysignal.Options{}, dst); err != nil || n != 3 {
		t.Fatal(n, err)
	}
	if dst.At(0).Sum().IsMonotonic() || dst.At(0).Sum().DataPoints().At(1).DoubleValue() != -1.5 {
		t.Error("a counter with a negative count stays monotonic")
	}
	if neg := dst.At(1).ExponentialHistogram().DataPoints().At(0).Negative(); neg.BucketCounts().Len() != 1 {
		t.Error("negative distribution value not in a negative bucket")
	}
}

func TestBadEntryCostsOnlyItself(t *testing.T) {
	payload := `{"items":[
		{"timestamp":1795644001,"name":"ok","type":"gauge","value":1},
		{"timestamp":1795644001,"type":"gauge","value":1},
		{"timestamp":1795644001,"name":"x","type":"set","value":1},
		{"timestamp":1795644001,"name":"x","type":"gauge","value":"1"},
		{"name":"x","type":"gauge","value":1},
		{"timestamp":1795644001,"name":"x","type":"gauge","value":1,"trace_id":"abc"},
		{"timestamp":1795644001,"name":"x","type":"gauge","value":1,"span_id":"abc"},
		{"timestamp":1795644001,"name":"bad","type":"gauge","value":1,"attributes":{"a":{"type":"string","value":"left"},"n":{"type":"integer","value":"x"}}},
		[],
		{"timestamp":1795644002,"name":"ok","type":"gauge","value":2}]}`
	dst := pmetric.NewMetricSlice()
	dst.AppendEmpty().SetName("the caller's") // must stay untouched
	n, err := AppendMetrics([]byte(payload), sentrysignal.Options{}, dst)
	var pe *sentrysignal.PartialError
	if n != 2 || !errors.As(err, &pe) || pe.Dropped != 8 {
		t.Fatalf("AppendMetrics = %d, %v", n, err)
	}
	if dst.Len() != 2 || dst.At(0).Name() != "the caller's" || dst.At(1).Gauge().DataPoints().Len() != 2 {
		t.Fatalf("metrics: %d, first %q", dst.Len(), dst.At(0).Name())
	}
	// what the bad entry wrote before it failed is no later point's
	if attrs := dst.At(1).Gauge().DataPoints().At(1).Attributes(); attrs.Len() != 0 {
		t.Errorf("the last point has attributes %v", attrs.AsRaw())
	}
	fields := []string{"name", "type", "value", "timestamp", "trace_id", "span_id", "attributes", ""}
	for i, de := range pe.Errors {
		if de.Field != fields[i] || de.Index != i+1 {
			t.Errorf("error %d: %v", i, de)
		}
	}
}

// metricsFromOTLP reads AppendMetrics' output back into Sentry metrics:
// the "back" column of README.md.
func metricsFromOTLP(dst pmetric.MetricSlice) []map[string]any {
	var out []map[string]any
	for _, m := range dst.All() {
		base := map[string]any{"name": m.Name()}
		if m.Unit() != "" {
			base["unit"] = SentryUnit(m.Unit())
		}
		switch m.Type() {
		case pmetric.MetricTypeSum:
			for _, dp := range m.Sum().DataPoints().All() {
				out = append(out, numberPoint(base, TypeCounter, dp))
			}
		case pmetric.MetricTypeGauge:
			for _, dp := range m.Gauge().DataPoints().All() {
				out = append(out, numberPoint(base, TypeGauge, dp))
			}
		case pmetric.MetricTypeExponentialHistogram:
			for _, dp := range m.ExponentialHistogram().DataPoints().All() {
				e := entry(base, TypeDistribution, dp.Timestamp(), dp.Attributes(), dp.Exemplars())
				e["value"] = dp.Sum()
				out = append(out, e)
			}
		}
	}
	return out
}

func numberPoint(base map[string]any, typ string, dp pmetric.NumberDataPoint) map[string]any {
	e := entry(base, typ, dp.Timestamp(), dp.Attributes(), dp.Exemplars())
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		e["value"] = dp.IntValue()
	} else {
		e["value"] = dp.DoubleValue()
	}
	return e
}

func entry(base map[string]any, typ string, ts pcommon.Timestamp, attrs pcommon.Map, ex pmetric.ExemplarSlice) map[string]any {
	e := map[string]any{"type": typ, "timestamp": signaltest.Seconds(ts)}
	for k, v := range base {
		e[k] = v
	}
	typed := map[string]any{}
	if ex.Len() > 0 {
		if !ex.At(0).TraceID().IsEmpty() {
			e["trace_id"] = ex.At(0).TraceID().String()
		}
		if !ex.At(0).SpanID().IsEmpty() {
			e["span_id"] = ex.At(0).SpanID().String()
		}
		for k, v := range ex.At(0).FilteredAttributes().All() {
			typ, val := signaltest.TypedAttribute(v)
			typed[k] = map[string]any{"type": typ, "value": val}
		}
	}
	for k, v := range attrs.All() {
		if member, ok := strings.CutPrefix(k, AttrPrefix); ok {
			e[member] = signaltest.ToAny(v)
			continue
		}
		typ, val := signaltest.TypedAttribute(v)
		typed[k] = map[string]any{"type": typ, "value": val}
	}
	if len(typed) > 0 {
		e["attributes"] = typed
	}
	return e
}

func TestRoundTrip(t *testing.T) {
	for _, file := range []string{"node11_metrics.json", "python268_metrics.json", "node11_captured_metrics_1.json",
		"python268_captured_trace_metric_1.json", "go050_captured_trace_metric_1.json"} {
		t.Run(file, func(t *testing.T) {
			payload := signaltest.ReadTestdata(t, file)
			dst := pmetric.NewMetricSlice()
			if _, err := AppendMetrics(payload, sentrysignal.Options{IncludeUserData: true}, dst); err != nil {
				t.Fatal(err)
			}
			got := metricsFromOTLP(dst)
			var in struct{ Items []map[string]any }
			dec := json.NewDecoder(bytes.NewReader(payload))
			dec.UseNumber()
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			for _, item := range in.Items {
				// back: seconds, whichever form the SDK wrote (sentry-go writes RFC 3339)
				ts, err := sentrysignal.TimestampOf(item["timestamp"])
				if err != nil {
					t.Fatal(err)
				}
				item["timestamp"] = signaltest.Seconds(ts)
			}
			// the output groups by name, type and unit: compare as sets
			if !reflect.DeepEqual(sortedJSON(t, got), sortedJSON(t, in.Items)) {
				t.Errorf("read back\n%s\nwant\n%s", sortedJSON(t, got), sortedJSON(t, in.Items))
			}
		})
	}
}

// sortedJSON is each entry's JSON text, sorted; numbers compare as JSON.
func sortedJSON(t *testing.T, entries any) []string {
	t.Helper()
	b, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	var list []any
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(list))
	for i, e := range list {
		eb, _ := json.Marshal(e)
		out[i] = string(eb)
	}
	sort.Strings(out)
	return out
}

func pointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	}
	return 0
}

// A trace_metric container as @sentry/node 11.1.0 sent it (count, gauge,
// distribution inside a span, sendDefaultPii on), captured from the SDK.
func TestCapturedNode11(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	n, err := AppendMetrics(signaltest.ReadTestdata(t, "node11_captured_metrics_1.json"), sentrysignal.Options{}, dst)
	if n != 3 || err != nil || dst.Len() != 3 {
		t.Fatalf("AppendMetrics = %d, %v (%d metrics)", n, err, dst.Len())
	}
	counter := dst.At(0).Sum().DataPoints().At(0)
	gauge := dst.At(1).Gauge().DataPoints().At(0)
	dist := dst.At(2).ExponentialHistogram().DataPoints().At(0)
	if counter.IntValue() != 1 || gauge.IntValue() != 42 || dist.Sum() != 187.5 || dst.At(2).Unit() != "ms" {
		t.Errorf("values %d %d %v unit %q", counter.IntValue(), gauge.IntValue(), dist.Sum(), dst.At(2).Unit())
	}
	for _, ex := range []pmetric.ExemplarSlice{counter.Exemplars(), gauge.Exemplars(), dist.Exemplars()} {
		if ex.Len() != 1 || ex.At(0).SpanID().String() != "b041fbb7f99f4835" || ex.At(0).TraceID().String() != "f2383fbd04214115a8ddb090beaffebd" {
			t.Errorf("exemplar of the span missing: %d", ex.Len())
		}
	}
	if _, ok := counter.Attributes().Get("user.id"); ok {
		t.Error("user.id kept without include_user_data")
	}
	if v, _ := counter.Attributes().Get("region"); v.Str() != "eu-1" {
		t.Errorf("region %q", v.Str())
	}
}

// sentry-python 2.68.0 writes every value as a float (a count of 1 is 1.0)
// and puts the span in a top-level span_id.
func TestCapturedPython268(t *testing.T) {
	dst := pmetric.NewMetricSlice()
	if n, err := AppendMetrics(signaltest.ReadTestdata(t, "python268_captured_trace_metric_1.json"), sentrysignal.Options{}, dst); n != 3 || err != nil {
		t.Fatalf("AppendMetrics = %d, %v", n, err)
	}
	counter := dst.At(0).Sum().DataPoints().At(0)
	if counter.ValueType() != pmetric.NumberDataPointValueTypeDouble || counter.DoubleValue() != 1 {
		t.Errorf("counter %v %v", counter.ValueType(), counter.DoubleValue())
	}
	if ex := counter.Exemplars().At(0); ex.SpanID().String() != "89b62d52a3d626f1" {
		t.Errorf("exemplar span %s", ex.SpanID())
	}
	if dst.At(1).Unit() != "MiBy" || dst.At(2).Unit() != "s" {
		t.Errorf("units %q %q", dst.At(1).Unit(), dst.At(2).Unit())
	}
	rows, _ := dst.At(2).ExponentialHistogram().DataPoints().At(0).Attributes().Get("rows")
	if rows.Int() != 1200 {
		t.Errorf("rows %v", rows.AsRaw())
	}
}

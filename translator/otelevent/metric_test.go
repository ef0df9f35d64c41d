package otelevent

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

type decodedItem struct {
	Timestamp  float64 `json:"timestamp"`
	TraceID    string  `json:"trace_id"`
	SpanID     string  `json:"span_id"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit"`
	Attributes map[string]struct {
		Value any    `json:"value"`
		Type  string `json:"type"`
	} `json:"attributes"`
}

func collectMetrics(t *testing.T, md pmetric.Metrics, opts MetricOptions) ([]decodedItem, []Drop, []Container) {
	t.Helper()
	var items []decodedItem
	var containers []Container
	drops := FromMetrics(md, opts, func(c Container) {
		containers = append(containers, c)
		var body struct{ Items []decodedItem }
		if err := json.Unmarshal(c.Payload, &body); err != nil {
			t.Fatalf("container is not JSON: %v", err)
		}
		if len(body.Items) != c.Items {
			t.Fatalf("container says %d items, holds %d", c.Items, len(body.Items))
		}
		items = append(items, body.Items...)
	})
	return items, drops, containers
}

var (
	start = pcommon.NewTimestampFromTime(time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC))
	tick  = func(s int) pcommon.Timestamp { return start + pcommon.Timestamp(time.Duration(s)*time.Second) }
)

func newMetric(md pmetric.Metrics, name, unit string) pmetric.Metric {
	if md.ResourceMetrics().Len() == 0 {
		rm := md.ResourceMetrics().AppendEmpty()
		testResource(rm.Resource())
		rm.ScopeMetrics().AppendEmpty()
	}
	m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty()
	m.SetName(name)
	m.SetUnit(unit)
	return m
}

func TestFromMetricsNumbers(t *testing.T) {
	md := pmetric.NewMetrics()
	c := newMetric(md, "orders.placed", "1").SetEmptySum()
	c.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	c.SetIsMonotonic(true)
	p := c.DataPoints().AppendEmpty()
	p.SetIntValue(3)
	p.SetTimestamp(tick(1))
	p.Attributes().PutStr("region", "eu-1")
	p.Attributes().PutBool("vip", true)
	ex := p.Exemplars().AppendEmpty()
	ex.SetTraceID(testTraceID)
	ex.SetSpanID(testSpanID)

	g := newMetric(md, "queue.depth", "").SetEmptyGauge().DataPoints().AppendEmpty()
	g.SetDoubleValue(4.5)
	g.SetTimestamp(tick(1))

	ud := newMetric(md, "connections", "").SetEmptySum()
	ud.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	ud.DataPoints().AppendEmpty().SetIntValue(-2)

	newMetric(md, "latency.summary", "ms").SetEmptySummary().DataPoints().AppendEmpty()

	items, drops, _ := collectMetrics(t, md, MetricOptions{})
	if len(items) != 3 {
		t.Fatalf("got %d items, want 3: %+v", len(items), items)
	}
	tests := []struct {
		i                int
		name, typ, unit  string
		value            float64
		wantTrace        bool
		attrKey, attrTyp string
	}{
		{0, "orders.placed", TypeCounter, "none", 3, true, "vip", "boolean"},
		{1, "queue.depth", TypeGauge, "", 4.5, false, "sentry.release", "string"},
		{2, "connections", TypeGauge, "", -2, false, "sentry.environment", "string"},
	}
	for _, tt := range tests {
		it := items[tt.i]
		if it.Name != tt.name || it.Type != tt.typ || it.Unit != tt.unit || it.Value != tt.value {
			t.Errorf("item %d = %s %s %s %v, want %s %s %s %v", tt.i, it.Name, it.Type, it.Unit, it.Value, tt.name, tt.typ, tt.unit, tt.value)
		}
		if tt.wantTrace && (it.TraceID != testTraceID.String() || it.SpanID != testSpanID.String()) {
			t.Errorf("item %d trace %s/%s, want the exemplar's", tt.i, it.TraceID, it.SpanID)
		}
		if len(it.TraceID) != 32 {
			t.Errorf("item %d has no trace id", tt.i)
		}
		if a, ok := it.Attributes[tt.attrKey]; !ok || a.Type != tt.attrTyp {
			t.Errorf("item %d attribute %s = %+v, want type %s", tt.i, tt.attrKey, a, tt.attrTyp)
		}
	}
	if len(drops) != 1 || drops[0].Reason != ReasonSummary || drops[0].Count != 1 {
		t.Errorf("drops = %+v, want one summary", drops)
	}
}

func TestFromMetricsCumulative(t *testing.T) {
	// A monotonic cumulative series: the first point is a delta only when
	// the series started after the memory did.
	series := func(startAt pcommon.Timestamp, values ...int64) pmetric.Metrics {
		md := pmetric.NewMetrics()
		s := newMetric(md, "requests", "").SetEmptySum()
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		s.SetIsMonotonic(true)
		for i, v := range values {
			p := s.DataPoints().AppendEmpty()
			p.SetStartTimestamp(startAt)
			p.SetTimestamp(startAt + pcommon.Timestamp(time.Duration(i+1)*10*time.Second))
			p.SetIntValue(v)
		}
		return md
	}
	tests := []struct {
		name      string
		memStart  pcommon.Timestamp
		md        pmetric.Metrics
		want      []float64
		wantDrops int
	}{
		{"started while watching", start, series(tick(5), 4, 10, 10, 25), []float64{4, 6, 0, 15}, 0},
		{"started before: first point dropped", tick(100), series(tick(5), 4, 10, 25), []float64{6, 15}, 1},
		{"no start time: first point dropped", start, series(0, 4, 10), []float64{6}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, drops, _ := collectMetrics(t, tt.md, MetricOptions{Memory: NewCumulativeMemory(10, tt.memStart)})
			var got []float64
			for _, it := range items {
				got = append(got, it.Value)
				if it.Type != TypeCounter {
					t.Errorf("type %s, want counter", it.Type)
				}
			}
			if !equalFloats(got, tt.want) {
				t.Errorf("values %v, want %v", got, tt.want)
			}
			n := 0
			for _, d := range drops {
				if d.Reason == ReasonCumulativeWithoutPrevious {
					n += d.Count
				}
			}
			if n != tt.wantDrops {
				t.Errorf("dropped %d, want %d (%+v)", n, tt.wantDrops, drops)
			}
		})
	}
}

func TestFromMetricsCumulativeAcrossRequests(t *testing.T) {
	mem := NewCumulativeMemory(10, start)
	var got []float64
	for i, v := range []int64{5, 9, 2} { // 2: the process restarted
		md := pmetric.NewMetrics()
		s := newMetric(md, "requests", "").SetEmptySum()
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		s.SetIsMonotonic(true)
		p := s.DataPoints().AppendEmpty()
		p.SetStartTimestamp(tick(1))
		if i == 2 {
			p.SetStartTimestamp(tick(50))
		}
		p.SetTimestamp(tick(10 * (i + 1) * 2))
		p.SetIntValue(v)
		items, _, _ := collectMetrics(t, md, MetricOptions{Memory: mem})
		for _, it := range items {
			got = append(got, it.Value)
		}
	}
	if want := []float64{5, 4, 2}; !equalFloats(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
}

func TestFromMetricsHistograms(t *testing.T) {
	md := pmetric.NewMetrics()
	h := newMetric(md, "http.duration", "ms").SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	one := h.DataPoints().AppendEmpty()
	one.SetCount(1)
	one.SetSum(187.5)
	one.SetMin(187.5)
	one.SetMax(187.5)
	one.ExplicitBounds().FromRaw([]float64{100, 200, 400})
	one.BucketCounts().FromRaw([]uint64{0, 1, 0, 0})

	many := h.DataPoints().AppendEmpty()
	many.SetCount(4)
	many.SetSum(900)
	many.SetMin(50)
	many.SetMax(500)
	many.ExplicitBounds().FromRaw([]float64{100, 200, 400})
	many.BucketCounts().FromRaw([]uint64{1, 2, 0, 1})

	huge := h.DataPoints().AppendEmpty()
	huge.SetCount(MaxObservationsPerPoint + 1)
	huge.ExplicitBounds().FromRaw([]float64{1})
	huge.BucketCounts().FromRaw([]uint64{MaxObservationsPerPoint + 1, 0})

	e := newMetric(md, "payload.size", "By").SetEmptyExponentialHistogram()
	e.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	ep := e.DataPoints().AppendEmpty()
	ep.SetScale(0)
	ep.SetCount(3)
	ep.SetZeroCount(1)
	ep.Positive().SetOffset(3) // (8, 16]
	ep.Positive().BucketCounts().FromRaw([]uint64{2})

	items, drops, _ := collectMetrics(t, md, MetricOptions{})
	var got []float64
	for _, it := range items {
		if it.Type != TypeDistribution {
			t.Errorf("%s: type %s, want distribution", it.Name, it.Type)
		}
		got = append(got, math.Round(it.Value*100)/100)
	}
	want := []float64{187.5, 50, 150, 150, 500, 0, 11.31, 11.31} // open buckets at min and max
	if !equalFloats(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
	if items[0].Unit != "millisecond" || items[len(items)-1].Unit != "byte" {
		t.Errorf("units %q %q, want Sentry's names", items[0].Unit, items[len(items)-1].Unit)
	}
	if len(drops) != 1 || drops[0].Reason != ReasonTooManyObservations {
		t.Errorf("drops = %+v", drops)
	}
}

func TestFromMetricsLimits(t *testing.T) {
	md := pmetric.NewMetrics()
	g := newMetric(md, "g", "").SetEmptyGauge()
	for i := 0; i < MaxMetricsPerContainer+5; i++ {
		g.DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	wide := g.DataPoints().At(0)
	for i := 0; i < 2*MaxMetricAttributes; i++ {
		wide.Attributes().PutInt("k"+string(rune('A'+i%26))+string(rune('a'+i/26)), int64(i))
	}
	items, drops, containers := collectMetrics(t, md, MetricOptions{})
	if len(items) != MaxMetricsPerContainer+5 || len(containers) != 2 || containers[0].Items != MaxMetricsPerContainer {
		t.Errorf("%d items in %d containers, want %d in 2", len(items), len(containers), MaxMetricsPerContainer+5)
	}
	if n := len(items[0].Attributes); n != MaxMetricAttributes {
		t.Errorf("first item has %d attributes, want %d", n, MaxMetricAttributes)
	}
	if len(drops) != 1 || drops[0].Reason != ReasonAttributesTruncated {
		t.Errorf("drops = %+v", drops)
	}
}

func TestCumulativeMemoryBounded(t *testing.T) {
	mem := NewCumulativeMemory(3, start)
	for i := 0; i < 10; i++ {
		mem.delta(seriesBase{name: string(rune('a' + i))}, tick(1), tick(2), []float64{1})
	}
	if mem.Len() != 3 {
		t.Errorf("memory holds %d series, want 3", mem.Len())
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFromMetricsCumulativeRetried: a request translated again (retried
// after a rate limit) sends the same deltas, not zeros.
func TestFromMetricsCumulativeRetried(t *testing.T) {
	mem := NewCumulativeMemory(10, start)
	md := pmetric.NewMetrics()
	s := newMetric(md, "requests", "").SetEmptySum()
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	s.SetIsMonotonic(true)
	for i, v := range []int64{4, 10} {
		p := s.DataPoints().AppendEmpty()
		p.SetStartTimestamp(tick(1))
		p.SetTimestamp(tick(10 * (i + 1)))
		p.SetIntValue(v)
	}
	var tries [][]float64
	for try := 0; try < 2; try++ {
		items, _, _ := collectMetrics(t, md, MetricOptions{Memory: mem})
		var got []float64
		for _, it := range items {
			got = append(got, it.Value)
		}
		tries = append(tries, got)
	}
	for i, got := range tries {
		if !equalFloats(got, []float64{4, 6}) {
			t.Errorf("try %d: values %v, want [4 6]", i+1, got)
		}
	}
}

// TestFromMetricsGrouped: resources of one group share containers, each
// container counting the items of each resource; other groups get their own.
func TestFromMetricsGrouped(t *testing.T) {
	md := pmetric.NewMetrics()
	for _, svc := range []string{"a", "b", "c"} {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", svc)
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("g")
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
		m.Gauge().DataPoints().AppendEmpty().SetIntValue(2)
	}
	group := func(i int) any { return i == 1 } // a and c together, b alone
	_, _, containers := collectMetrics(t, md, MetricOptions{Group: group})
	if len(containers) != 2 {
		t.Fatalf("%d containers, want 2", len(containers))
	}
	if got := containers[0].Resources; len(got) != 2 || got[0] != 2 || got[2] != 2 || containers[0].Items != 4 {
		t.Errorf("first container resources %v (%d items), want {0:2, 2:2}", got, containers[0].Items)
	}
	if got := containers[1].Resources; len(got) != 1 || got[1] != 2 {
		t.Errorf("second container resources %v, want {1:2}", got)
	}
	if !strings.Contains(string(containers[0].Payload), `"service.name":{"value":"c"`) {
		t.Errorf("an item of c lacks its resource's facts: %s", containers[0].Payload)
	}
}

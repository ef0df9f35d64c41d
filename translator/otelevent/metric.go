package otelevent

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrymetric"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// Limits of trace_metric containers (Relay's values in the README).
const (
	// MaxMetricsPerContainer bounds the items of one container: the
	// JavaScript SDK flushes its metric buffer at 1 000.
	MaxMetricsPerContainer = 1000
	// MaxContainerBytes bounds one container's JSON, far under Relay's
	// max_container_size (12 MiB), so that a failed request resends little.
	MaxContainerBytes = 1 << 20
	// MaxMetricAttributes bounds the attributes of one item; the first keys
	// in key order are kept and the point is counted as truncated.
	MaxMetricAttributes = 128
	// MaxObservationsPerPoint bounds the distribution items one histogram
	// point expands into; a point with more observations is dropped.
	MaxObservationsPerPoint = 1000
)

// Reasons a metric point is not sent, or sent changed.
const (
	ReasonSummary                   = "summary_not_supported"
	ReasonCumulativeWithoutPrevious = "cumulative_without_previous"
	ReasonTooManyObservations       = "histogram_too_many_observations"
	ReasonEmptyMetric               = "no_value"
	// ReasonAttributesTruncated marks points sent with MaxMetricAttributes
	// attributes: counted, not lost.
	ReasonAttributesTruncated = "attributes_truncated"
)

// Trace metric item types.
const (
	TypeCounter      = "counter"
	TypeGauge        = "gauge"
	TypeDistribution = "distribution"
)

// MetricOptions configures FromMetrics.
type MetricOptions struct {
	DefaultRelease, DefaultEnvironment string
	// Memory holds the previous point of each cumulative series; nil
	// treats every cumulative point as the first of its series.
	Memory *CumulativeMemory
	// Group names the container a resource's items go to (the exporter:
	// its project), so that the resources of one group share containers;
	// nil gives each resource its own. Every item carries its resource's
	// facts as attributes, so items of several resources mix freely.
	Group func(resourceIndex int) any
}

// Container is one trace_metric item, encoded: items of one resource, or
// of several resources of one group.
type Container struct {
	// Resources counts the items of each resource in the container.
	Resources map[int]int
	Items     int
	Payload   []byte
}

// metricItem is one entry of a trace_metric container, as the JavaScript
// and Python SDKs write it.
type metricItem struct {
	Timestamp  float64               `json:"timestamp"`
	TraceID    string                `json:"trace_id"`
	SpanID     string                `json:"span_id,omitempty"`
	Name       string                `json:"name"`
	Type       string                `json:"type"`
	Value      any                   `json:"value"`
	Unit       string                `json:"unit,omitempty"`
	Attributes map[string]typedValue `json:"attributes,omitempty"`
}

type typedValue struct {
	Value any    `json:"value"`
	Type  string `json:"type"`
}

// FromMetrics calls emit with the trace_metric containers of each
// resource, and returns what it did not send (Drop.Count in points).
func FromMetrics(md pmetric.Metrics, opts MetricOptions, emit func(Container)) []Drop {
	var drops []Drop
	writers := map[any]*containerWriter{}
	var order []*containerWriter
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		var group any = i
		if opts.Group != nil {
			group = opts.Group(i)
		}
		w, ok := writers[group]
		if !ok {
			w = &containerWriter{emit: emit}
			writers[group] = w
			order = append(order, w)
		}
		w.resource, w.base = i, resourceMetricAttributes(rm.Resource(), opts)
		w.fallbackTrace = newEventID()
		resKey := mapHash(rm.Resource().Attributes())
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				key := seriesBase{resource: resKey, name: m.Name()}
				for _, d := range w.metric(m, key, opts.Memory) {
					drops = appendDrop(drops, &d)
				}
			}
		}
	}
	for _, w := range order {
		w.flush()
	}
	return drops
}

// resourceMetricAttributes are the attributes the SDKs put on every metric:
// release, environment, SDK and server.
func resourceMetricAttributes(res pcommon.Resource, opts MetricOptions) map[string]typedValue {
	r := resourceFacts(res, EventOptions{DefaultRelease: opts.DefaultRelease, DefaultEnvironment: opts.DefaultEnvironment})
	base := map[string]typedValue{}
	put := func(k, v string) {
		if v != "" {
			base[k] = typedValue{Value: v, Type: "string"}
		}
	}
	put(sentryattr.Release, r.release)
	put(sentryattr.Environment, r.environment)
	if r.sdk != nil {
		put(sentryattr.SDKName, r.sdk.Name)
		put(sentryattr.SDKVersion, r.sdk.Version)
	}
	put("server.address", r.serverName)
	put("service.name", r.service)
	return base
}

// containerWriter fills the containers of one group; resource, base and
// fallbackTrace are those of the resource being written.
type containerWriter struct {
	resource      int
	emit          func(Container)
	base          map[string]typedValue
	fallbackTrace string
	items         []json.RawMessage
	resources     map[int]int
	size          int
}

func (w *containerWriter) add(it metricItem) {
	raw, err := json.Marshal(it)
	if err != nil {
		return // every value is a finite number or a string: cannot fail
	}
	if len(w.items) == MaxMetricsPerContainer || (len(w.items) > 0 && w.size+len(raw)+32 > MaxContainerBytes) {
		w.flush()
	}
	w.items = append(w.items, raw)
	if w.resources == nil {
		w.resources = map[int]int{}
	}
	w.resources[w.resource]++
	w.size += len(raw) + 1
}

func (w *containerWriter) flush() {
	if len(w.items) == 0 {
		return
	}
	payload, _ := json.Marshal(map[string]any{"items": w.items})
	w.emit(Container{Resources: w.resources, Items: len(w.items), Payload: payload})
	w.items, w.resources, w.size = nil, nil, 0
}

// metric writes the items of one metric's points.
func (w *containerWriter) metric(m pmetric.Metric, key seriesBase, mem *CumulativeMemory) []Drop {
	unit := sentrymetric.SentryUnit(m.Unit())
	var drops []Drop
	note := func(reason string, n int, err error) {
		if n > 0 {
			drops = appendDrop(drops, &Drop{Reason: reason, Count: n, Err: err})
		}
	}
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		pts := m.Gauge().DataPoints()
		for i := 0; i < pts.Len(); i++ {
			w.number(m.Name(), TypeGauge, unit, pts.At(i), numberValue(pts.At(i)), note)
		}
	case pmetric.MetricTypeSum:
		w.sum(m, unit, key, mem, note)
	case pmetric.MetricTypeHistogram:
		pts := m.Histogram().DataPoints()
		cumulative := m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
		for i := 0; i < pts.Len(); i++ {
			w.histogram(m.Name(), unit, explicitBuckets(pts.At(i), !cumulative), pts.At(i).Attributes(), pts.At(i).Exemplars(), cumulative, key, mem, note)
		}
	case pmetric.MetricTypeExponentialHistogram:
		pts := m.ExponentialHistogram().DataPoints()
		cumulative := m.ExponentialHistogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
		for i := 0; i < pts.Len(); i++ {
			w.histogram(m.Name(), unit, exponentialBuckets(pts.At(i)), pts.At(i).Attributes(), pts.At(i).Exemplars(), cumulative, key, mem, note)
		}
	case pmetric.MetricTypeSummary:
		// A summary's quantiles cannot be turned back into observations,
		// and its sum and count alone would make a second metric of another
		// type under the same name.
		note(ReasonSummary, m.Summary().DataPoints().Len(), fmt.Errorf("metric %q is a Summary", m.Name()))
	default:
		note(ReasonEmptyMetric, 1, fmt.Errorf("metric %q has no data", m.Name()))
	}
	return drops
}

func numberValue(p pmetric.NumberDataPoint) float64 {
	if p.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(p.IntValue())
	}
	return p.DoubleValue()
}

// number writes one counter or gauge item; the value keeps an integer
// point's JSON form.
func (w *containerWriter) number(name, typ, unit string, p pmetric.NumberDataPoint, v float64, note func(string, int, error)) {
	var value any = v
	if p.ValueType() == pmetric.NumberDataPointValueTypeInt && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		value = int64(v)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		note(ReasonEmptyMetric, 1, fmt.Errorf("metric %q: value %v", name, v))
		return
	}
	w.add(w.item(name, typ, unit, p.Timestamp(), value, p.Attributes(), p.Exemplars(), note))
}

func (w *containerWriter) sum(m pmetric.Metric, unit string, key seriesBase, mem *CumulativeMemory, note func(string, int, error)) {
	s := m.Sum()
	pts := s.DataPoints()
	for i := 0; i < pts.Len(); i++ {
		p := pts.At(i)
		v := numberValue(p)
		switch {
		case s.AggregationTemporality() != pmetric.AggregationTemporalityCumulative:
			w.number(m.Name(), TypeCounter, unit, p, v, note)
		case !s.IsMonotonic():
			// An up-down counter's cumulative value is its current level:
			// a gauge.
			w.number(m.Name(), TypeGauge, unit, p, v, note)
		default:
			delta, ok := mem.delta(key.with(p.Attributes()), p.StartTimestamp(), p.Timestamp(), []float64{v})
			if !ok {
				note(ReasonCumulativeWithoutPrevious, 1, fmt.Errorf("metric %q: first cumulative point of a series older than this exporter", m.Name()))
				continue
			}
			w.number(m.Name(), TypeCounter, unit, p, delta[0], note)
		}
	}
}

// buckets is a histogram point in one shape for both kinds: counts and the
// representative value of each bucket.
type buckets struct {
	ts, start pcommon.Timestamp
	count     uint64
	sum       float64
	hasSum    bool
	min, max  float64
	hasMinMax bool
	counts    []float64
	values    []float64
}

// explicitBuckets reads a point; an open-ended bucket is represented by the
// point's min or max when they describe the same observations (delta).
func explicitBuckets(p pmetric.HistogramDataPoint, delta bool) buckets {
	b := buckets{ts: p.Timestamp(), start: p.StartTimestamp(), count: p.Count(), sum: p.Sum(), hasSum: p.HasSum(),
		min: p.Min(), max: p.Max(), hasMinMax: p.HasMin() && p.HasMax()}
	bounds := p.ExplicitBounds().AsRaw()
	counts := p.BucketCounts().AsRaw()
	for i, c := range counts {
		b.counts = append(b.counts, float64(c))
		var v float64
		switch {
		case len(bounds) == 0:
			v = b.sum / math.Max(1, float64(b.count))
		case i == 0 && delta && b.hasMinMax:
			v = b.min
		case i == 0:
			v = bounds[0]
		case i >= len(bounds) && delta && b.hasMinMax:
			v = b.max
		case i >= len(bounds):
			v = bounds[len(bounds)-1]
		default:
			v = (bounds[i-1] + bounds[i]) / 2
		}
		b.values = append(b.values, v)
	}
	return b
}

func exponentialBuckets(p pmetric.ExponentialHistogramDataPoint) buckets {
	b := buckets{ts: p.Timestamp(), start: p.StartTimestamp(), count: p.Count(), sum: p.Sum(), hasSum: p.HasSum(),
		min: p.Min(), max: p.Max(), hasMinMax: p.HasMin() && p.HasMax()}
	base := math.Exp2(math.Exp2(-float64(p.Scale())))
	b.counts = append(b.counts, float64(p.ZeroCount()))
	b.values = append(b.values, 0)
	for sign, side := range [2]pmetric.ExponentialHistogramDataPointBuckets{p.Positive(), p.Negative()} {
		for i, c := range side.BucketCounts().AsRaw() {
			// Bucket k covers (base^k, base^(k+1)]: its geometric middle.
			v := math.Pow(base, float64(side.Offset())+float64(i)+0.5)
			if sign == 1 {
				v = -v
			}
			b.counts = append(b.counts, float64(c))
			b.values = append(b.values, v)
		}
	}
	return b
}

// histogram writes a histogram point as distribution items, one per
// observation: exactly when the point holds one observation or all are
// equal (min = max), else at each bucket's middle, clamped to min and max.
func (w *containerWriter) histogram(name, unit string, b buckets, attrs pcommon.Map, ex pmetric.ExemplarSlice, cumulative bool,
	key seriesBase, mem *CumulativeMemory, note func(string, int, error)) {
	counts := b.counts
	exact := b.hasMinMax && (b.count == 1 || b.min == b.max)
	if cumulative {
		prev := append([]float64{float64(b.count), b.sum}, b.counts...)
		delta, ok := mem.delta(key.with(attrs), b.start, b.ts, prev)
		if !ok {
			note(ReasonCumulativeWithoutPrevious, 1, fmt.Errorf("metric %q: first cumulative point of a series older than this exporter", name))
			return
		}
		counts = delta[2:]
		// min and max describe the whole cumulative window, not the delta.
		exact = delta[0] == 1 && b.hasSum && delta[1] == delta[1]
		if exact {
			b.sum = delta[1]
		}
		b.count = uint64(delta[0])
		b.hasMinMax = false
	}
	if b.count == 0 {
		return
	}
	if b.count > MaxObservationsPerPoint {
		note(ReasonTooManyObservations, 1, fmt.Errorf("metric %q: %d observations in one point, over %d", name, b.count, MaxObservationsPerPoint))
		return
	}
	emitValue := func(v float64) {
		w.add(w.item(name, TypeDistribution, unit, b.ts, v, attrs, ex, note))
	}
	if exact {
		v := b.min
		if b.count == 1 && b.hasSum {
			v = b.sum
		}
		for n := uint64(0); n < b.count; n++ {
			emitValue(v)
		}
		return
	}
	for i, c := range counts {
		v := b.values[i]
		if b.hasMinMax {
			v = math.Min(math.Max(v, b.min), b.max)
		}
		for n := 0; n < int(c); n++ {
			emitValue(v)
		}
	}
}

// item builds one entry: the exemplar's trace context (the first exemplar
// that has one), else the resource's stand-in trace id, since Relay
// requires one.
func (w *containerWriter) item(name, typ, unit string, ts pcommon.Timestamp, value any, attrs pcommon.Map, ex pmetric.ExemplarSlice, note func(string, int, error)) metricItem {
	it := metricItem{Timestamp: seconds(ts), Name: name, Type: typ, Value: value, Unit: unit, TraceID: w.fallbackTrace}
	for i := 0; i < ex.Len(); i++ {
		if e := ex.At(i); !e.TraceID().IsEmpty() {
			it.TraceID = e.TraceID().String()
			if !e.SpanID().IsEmpty() {
				it.SpanID = e.SpanID().String()
			}
			break
		}
	}
	it.Attributes = make(map[string]typedValue, len(w.base)+attrs.Len())
	for k, v := range w.base {
		it.Attributes[k] = v
	}
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys)+len(w.base) > MaxMetricAttributes {
		note(ReasonAttributesTruncated, 1, fmt.Errorf("metric %q: %d attributes, %d kept", name, len(keys), MaxMetricAttributes-len(w.base)))
		keys = keys[:max(0, MaxMetricAttributes-len(w.base))]
	}
	for _, k := range keys {
		v, _ := attrs.Get(k)
		it.Attributes[k] = typedOf(v)
	}
	return it
}

// typedOf is an attribute as the SDKs type it: string, boolean, integer or
// double; other values as their JSON text.
func typedOf(v pcommon.Value) typedValue {
	switch v.Type() {
	case pcommon.ValueTypeBool:
		return typedValue{Value: v.Bool(), Type: "boolean"}
	case pcommon.ValueTypeInt:
		return typedValue{Value: v.Int(), Type: "integer"}
	case pcommon.ValueTypeDouble:
		if f := v.Double(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return typedValue{Value: f, Type: "double"}
		}
	}
	return typedValue{Value: cut(v.AsString(), MaxExtraValueChars), Type: "string"}
}

func seconds(ts pcommon.Timestamp) float64 {
	if ts == 0 {
		return float64(time.Now().UnixMicro()) / 1e6
	}
	return float64(ts.AsTime().UnixMicro()) / 1e6
}

package otelevent

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
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
	mw := metricsWriter{opts: opts, emit: emit, writers: map[any]*containerWriter{}}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		mw.resourceMetrics(i, rms.At(i))
	}
	for _, w := range mw.order {
		w.flush()
	}
	return mw.drops.list
}

// metricsWriter is the state of one FromMetrics call: a container writer
// per group, in the order the groups first appear.
type metricsWriter struct {
	opts    MetricOptions
	emit    func(Container)
	writers map[any]*containerWriter
	order   []*containerWriter
	drops   dropList
}

// resourceMetrics writes the metrics of resource i.
func (mw *metricsWriter) resourceMetrics(i int, rm pmetric.ResourceMetrics) {
	w := mw.writerFor(i)
	w.resource, w.base = i, resourceMetricAttributes(rm.Resource(), mw.opts)
	w.fallbackTrace = newEventID()
	resKey := mapHash(rm.Resource().Attributes())
	for j := 0; j < rm.ScopeMetrics().Len(); j++ {
		ms := rm.ScopeMetrics().At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			m := ms.At(k)
			w.metric(m, seriesBase{resource: resKey, name: m.Name()}, mw.opts.Memory)
		}
	}
}

// writerFor is the container writer of resource i's group.
func (mw *metricsWriter) writerFor(i int) *containerWriter {
	var group any = i
	if mw.opts.Group != nil {
		group = mw.opts.Group(i)
	}
	w, ok := mw.writers[group]
	if !ok {
		w = &containerWriter{emit: mw.emit, drops: &mw.drops}
		mw.writers[group] = w
		mw.order = append(mw.order, w)
	}
	return w
}

// dropList adds up what is not sent, by reason.
type dropList struct{ list []Drop }

// note counts n points of reason, when there are any.
func (d *dropList) note(reason string, n int, err error) {
	if n > 0 {
		d.list = appendDrop(d.list, &Drop{Reason: reason, Count: n, Err: err})
	}
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
	drops         *dropList
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
	if w.fullFor(len(raw)) {
		w.flush()
	}
	w.items = append(w.items, raw)
	if w.resources == nil {
		w.resources = map[int]int{}
	}
	w.resources[w.resource]++
	w.size += len(raw) + 1
}

// fullFor reports whether an item of n bytes no longer fits the container.
func (w *containerWriter) fullFor(n int) bool {
	return len(w.items) == MaxMetricsPerContainer || (len(w.items) > 0 && w.size+n+32 > MaxContainerBytes)
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
func (w *containerWriter) metric(m pmetric.Metric, key seriesBase, mem *CumulativeMemory) {
	unit := sentrymetric.SentryUnit(m.Unit())
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		w.gauge(m, unit)
	case pmetric.MetricTypeSum:
		w.sum(m, unit, key, mem)
	case pmetric.MetricTypeHistogram:
		w.histograms(m, unit, key, mem)
	case pmetric.MetricTypeExponentialHistogram:
		w.exponentialHistograms(m, unit, key, mem)
	case pmetric.MetricTypeSummary:
		// A summary's quantiles cannot be turned back into observations,
		// and its sum and count alone would make a second metric of another
		// type under the same name.
		w.drops.note(ReasonSummary, m.Summary().DataPoints().Len(), fmt.Errorf("metric %q is a Summary", m.Name()))
	default:
		w.drops.note(ReasonEmptyMetric, 1, fmt.Errorf("metric %q has no data", m.Name()))
	}
}

func (w *containerWriter) gauge(m pmetric.Metric, unit string) {
	pts := m.Gauge().DataPoints()
	for i := 0; i < pts.Len(); i++ {
		w.number(m.Name(), TypeGauge, unit, pts.At(i), numberValue(pts.At(i)))
	}
}

func (w *containerWriter) histograms(m pmetric.Metric, unit string, key seriesBase, mem *CumulativeMemory) {
	pts := m.Histogram().DataPoints()
	cumulative := m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
	for i := 0; i < pts.Len(); i++ {
		p := pts.At(i)
		w.histogram(histogramPoint{name: m.Name(), unit: unit, b: explicitBuckets(p, !cumulative),
			attrs: p.Attributes(), ex: p.Exemplars(), cumulative: cumulative}, key, mem)
	}
}

func (w *containerWriter) exponentialHistograms(m pmetric.Metric, unit string, key seriesBase, mem *CumulativeMemory) {
	pts := m.ExponentialHistogram().DataPoints()
	cumulative := m.ExponentialHistogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
	for i := 0; i < pts.Len(); i++ {
		p := pts.At(i)
		w.histogram(histogramPoint{name: m.Name(), unit: unit, b: exponentialBuckets(p),
			attrs: p.Attributes(), ex: p.Exemplars(), cumulative: cumulative}, key, mem)
	}
}

func numberValue(p pmetric.NumberDataPoint) float64 {
	if p.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(p.IntValue())
	}
	return p.DoubleValue()
}

// number writes one counter or gauge item.
func (w *containerWriter) number(name, typ, unit string, p pmetric.NumberDataPoint, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.drops.note(ReasonEmptyMetric, 1, fmt.Errorf("metric %q: value %v", name, v))
		return
	}
	w.add(w.item(name, typ, unit, p.Timestamp(), jsonNumber(p, v), p.Attributes(), p.Exemplars()))
}

// jsonNumber keeps an integer point's JSON form for its value.
func jsonNumber(p pmetric.NumberDataPoint, v float64) any {
	if p.ValueType() == pmetric.NumberDataPointValueTypeInt && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return int64(v)
	}
	return v
}

func (w *containerWriter) sum(m pmetric.Metric, unit string, key seriesBase, mem *CumulativeMemory) {
	s := m.Sum()
	pts := s.DataPoints()
	for i := 0; i < pts.Len(); i++ {
		p := pts.At(i)
		v := numberValue(p)
		switch {
		case s.AggregationTemporality() != pmetric.AggregationTemporalityCumulative:
			w.number(m.Name(), TypeCounter, unit, p, v)
		case !s.IsMonotonic():
			// An up-down counter's cumulative value is its current level:
			// a gauge.
			w.number(m.Name(), TypeGauge, unit, p, v)
		default:
			w.cumulativeCounter(m.Name(), unit, p, v, key, mem)
		}
	}
}

// cumulativeCounter writes a monotonic cumulative point as the counter of
// what it added since the series' previous point.
func (w *containerWriter) cumulativeCounter(name, unit string, p pmetric.NumberDataPoint, v float64, key seriesBase, mem *CumulativeMemory) {
	delta, ok := mem.delta(key.with(p.Attributes()), p.StartTimestamp(), p.Timestamp(), []float64{v})
	if !ok {
		w.noPrevious(name)
		return
	}
	w.number(name, TypeCounter, unit, p, delta[0])
}

// noPrevious counts a cumulative point that has no delta.
func (w *containerWriter) noPrevious(name string) {
	w.drops.note(ReasonCumulativeWithoutPrevious, 1, fmt.Errorf("metric %q: first cumulative point of a series older than this exporter", name))
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
	for i, c := range p.BucketCounts().AsRaw() {
		b.counts = append(b.counts, float64(c))
		b.values = append(b.values, b.explicitValue(bounds, i, delta))
	}
	return b
}

// explicitValue represents bucket i: the middle of its bounds; for the
// open-ended first and last, their bound, or min and max for a delta
// point that has them; without bounds, the mean.
func (b *buckets) explicitValue(bounds []float64, i int, delta bool) float64 {
	minMax := delta && b.hasMinMax
	switch {
	case len(bounds) == 0:
		return b.sum / math.Max(1, float64(b.count))
	case i == 0:
		return pick(minMax, b.min, bounds[0])
	case i >= len(bounds):
		return pick(minMax, b.max, bounds[len(bounds)-1])
	}
	return (bounds[i-1] + bounds[i]) / 2
}

func pick(cond bool, ifTrue, otherwise float64) float64 {
	if cond {
		return ifTrue
	}
	return otherwise
}

func exponentialBuckets(p pmetric.ExponentialHistogramDataPoint) buckets {
	b := buckets{ts: p.Timestamp(), start: p.StartTimestamp(), count: p.Count(), sum: p.Sum(), hasSum: p.HasSum(),
		min: p.Min(), max: p.Max(), hasMinMax: p.HasMin() && p.HasMax()}
	base := math.Exp2(math.Exp2(-float64(p.Scale())))
	b.counts = append(b.counts, float64(p.ZeroCount()))
	b.values = append(b.values, 0)
	b.addExponential(p.Positive(), base, 1)
	b.addExponential(p.Negative(), base, -1)
	return b
}

// addExponential adds the buckets of one side: bucket k covers
// (base^k, base^(k+1)], represented by its geometric middle.
func (b *buckets) addExponential(side pmetric.ExponentialHistogramDataPointBuckets, base, sign float64) {
	for i, c := range side.BucketCounts().AsRaw() {
		b.counts = append(b.counts, float64(c))
		b.values = append(b.values, sign*math.Pow(base, float64(side.Offset())+float64(i)+0.5))
	}
}

// histogramPoint is one histogram point to write, of either kind.
type histogramPoint struct {
	name, unit string
	b          buckets
	attrs      pcommon.Map
	ex         pmetric.ExemplarSlice
	cumulative bool
}

// histogram writes a histogram point as distribution items, one per
// observation: exactly when the point holds one observation or all are
// equal (min = max), else at each bucket's middle, clamped to min and max.
func (w *containerWriter) histogram(hp histogramPoint, key seriesBase, mem *CumulativeMemory) {
	b, counts, exact := hp.b, hp.b.counts, hp.b.exactlyKnown()
	if hp.cumulative {
		var ok bool
		if b, counts, exact, ok = hp.b.sinceLast(key.with(hp.attrs), mem); !ok {
			w.noPrevious(hp.name)
			return
		}
	}
	if b.count == 0 {
		return
	}
	if b.count > MaxObservationsPerPoint {
		w.drops.note(ReasonTooManyObservations, 1, fmt.Errorf("metric %q: %d observations in one point, over %d", hp.name, b.count, MaxObservationsPerPoint))
		return
	}
	emit := func(v float64, times int) {
		for range times {
			w.add(w.item(hp.name, TypeDistribution, hp.unit, b.ts, v, hp.attrs, hp.ex))
		}
	}
	if exact {
		emit(b.exactValue(), int(b.count))
		return
	}
	for i, c := range counts {
		emit(b.clamp(b.values[i]), int(c))
	}
}

// exactlyKnown reports whether every observation of a point is known: one
// observation, or all equal.
func (b *buckets) exactlyKnown() bool {
	return b.hasMinMax && (b.count == 1 || b.min == b.max)
}

// exactValue is the value of every observation of an exactly known point.
func (b *buckets) exactValue() float64 {
	if b.count == 1 && b.hasSum {
		return b.sum
	}
	return b.min
}

// clamp keeps a bucket's value within the point's min and max.
func (b *buckets) clamp(v float64) float64 {
	if b.hasMinMax {
		return math.Min(math.Max(v, b.min), b.max)
	}
	return v
}

// sinceLast is a cumulative point as the delta from the series' previous
// point: its count, sum and bucket counts. min and max describe the whole
// cumulative window, not the delta, so only a single observation with a
// sum is exact. ok is false without a previous point.
func (b buckets) sinceLast(series seriesBase, mem *CumulativeMemory) (buckets, []float64, bool, bool) {
	prev := append([]float64{float64(b.count), b.sum}, b.counts...)
	delta, ok := mem.delta(series, b.start, b.ts, prev)
	if !ok {
		return b, nil, false, false
	}
	exact := delta[0] == 1 && b.hasSum && delta[1] == delta[1]
	if exact {
		b.sum = delta[1]
	}
	b.count = uint64(delta[0])
	b.hasMinMax = false
	return b, delta[2:], exact, true
}

// item builds one entry: the exemplar's trace context (the first exemplar
// that has one), else the resource's stand-in trace id, since Relay
// requires one.
func (w *containerWriter) item(name, typ, unit string, ts pcommon.Timestamp, value any, attrs pcommon.Map, ex pmetric.ExemplarSlice) metricItem {
	it := metricItem{Timestamp: seconds(ts), Name: name, Type: typ, Value: value, Unit: unit, TraceID: w.fallbackTrace}
	if traceID, spanID, ok := exemplarTrace(ex); ok {
		it.TraceID, it.SpanID = traceID, spanID
	}
	it.Attributes = w.attributes(name, attrs)
	return it
}

// exemplarTrace is the trace context of the first exemplar that has one.
func exemplarTrace(ex pmetric.ExemplarSlice) (traceID, spanID string, ok bool) {
	for i := 0; i < ex.Len(); i++ {
		e := ex.At(i)
		if e.TraceID().IsEmpty() {
			continue
		}
		if !e.SpanID().IsEmpty() {
			spanID = e.SpanID().String()
		}
		return e.TraceID().String(), spanID, true
	}
	return "", "", false
}

// attributes are the resource's attributes and the point's, the first
// point keys in key order up to MaxMetricAttributes.
func (w *containerWriter) attributes(name string, attrs pcommon.Map) map[string]typedValue {
	out := make(map[string]typedValue, len(w.base)+attrs.Len())
	maps.Copy(out, w.base)
	keys := sortedKeys(attrs)
	if len(keys)+len(w.base) > MaxMetricAttributes {
		w.drops.note(ReasonAttributesTruncated, 1, fmt.Errorf("metric %q: %d attributes, %d kept", name, len(keys), MaxMetricAttributes-len(w.base)))
		keys = keys[:max(0, MaxMetricAttributes-len(w.base))]
	}
	for _, k := range keys {
		v, _ := attrs.Get(k)
		out[k] = typedOf(v)
	}
	return out
}

func sortedKeys(attrs pcommon.Map) []string {
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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

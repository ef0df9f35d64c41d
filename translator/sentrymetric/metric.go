package sentrymetric

import (
	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// ItemType is the envelope item type this package reads.
const ItemType = "trace_metric"

// Sentry's metric types.
const (
	TypeCounter      = "counter"
	TypeGauge        = "gauge"
	TypeDistribution = "distribution"
)

// AttrPrefix names the members of a metric this version does not know,
// kept on its data point as "sentry.payload.<member>" (apart from the
// typed attributes, which SDKs already name sentry.*).
const AttrPrefix = sentryattr.PayloadPrefix

// point is one decoded Sentry metric.
type point struct {
	name, typ, unit string
	ts              pcommon.Timestamp
	value           number
	traceID         pcommon.TraceID
	spanID          pcommon.SpanID
	attrs           pcommon.Map // "attributes" and the unknown members
	// observed is the attribute of the one observation (see
	// observationAttribute), for its exemplar.
	observed pcommon.Map
	// series is the Metric of the point's name, type and unit, when
	// inSeries says an earlier point started it.
	series   pmetric.Metric
	inSeries bool
	// typed are the "attributes" read when they are all of attrs: told
	// where they were written, so that the entries after with the same
	// attributes write a copy (see TypedAttributes.Wrote).
	typed *sentrysignal.TypedAttributes
	// resource is what the attributes name of the program.
	resource sentryresource.Resource
}

// reset makes p ready for the next metric. Only what the metric may not
// set is reset here, and the resource only for a point that starts a
// series (see readSeries): writing the pointers of a whole point per
// metric cost the write barriers of each while the garbage collector
// marks.
func (p *point) reset() {
	emptyMap(&p.attrs)
	emptyMap(&p.observed)
	p.traceID, p.spanID = pcommon.TraceID{}, pcommon.SpanID{}
	if p.typed != nil {
		p.typed = nil
	}
}

// number keeps an integer value apart from a float one.
type number struct {
	isInt bool
	i     int64
	f     float64
}

func (n number) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

// Metrics is the router's contract for a "trace_metric" item: its
// metrics, and the resource their sentry.release, sentry.environment,
// sentry.sdk.* and server.address attributes name (read from the first
// point of each metric). Metrics of the same name, type and unit share one
// pmetric.Metric, in the order they first appear, each entry one data
// point. An entry that cannot be read is dropped alone (a
// *sentrysignal.PartialError names it); a payload that is not a container
// gives nothing (a *sentrysignal.DecodeError).
func Metrics(payload []byte, opts sentrysignal.Options) (sentrysignal.Metrics, error) {
	b := metricBatch{opts: opts.WithDefaults()}
	b.Restart()
	if err := sentrysignal.ScanContainer(ItemType, payload, b.opts, &b); err != nil {
		return sentrysignal.Metrics{}, err
	}
	return sentrysignal.MetricsOf(b.facts, b.metrics, b.points), b.partial.Err()
}

// metricBatch is the metrics of one container being written.
type metricBatch struct {
	opts    sentrysignal.Options
	metrics pmetric.MetricSlice
	groups  map[groupKey]pmetric.Metric
	facts   sentrysignal.Facts
	partial sentrysignal.PartialError
	points  int
	// point and limiter are reset for each metric.
	point   point
	limiter sentrysignal.Limiter
	ids     sentrysignal.IDMemo
}

// Restart starts the batch afresh.
func (b *metricBatch) Restart() {
	b.metrics = pmetric.NewMetricSlice()
	b.groups = map[groupKey]pmetric.Metric{}
	b.facts = sentrysignal.Facts{}
	b.partial = sentrysignal.PartialError{Item: ItemType}
	b.points = 0
}

// Entry writes one metric as a point of its series' Metric, which the
// first point of a series starts.
func (b *metricBatch) Entry(index int, entry any) {
	b.limiter.Reset(b.opts)
	p := &b.point
	if de := decodePoint(p, &b.limiter, &b.ids, b.groups, entry, index); de != nil {
		b.partial.Add(de)
		return
	}
	m := p.series
	if !p.inSeries {
		m = newMetric(b.metrics.AppendEmpty(), p)
		b.groups[groupKey{p.name, p.typ, p.unit}] = m
		b.facts.Resource.Fill(p.resource)
	}
	attrs := putPoint(m, p)
	if p.typed != nil {
		p.typed.Wrote(attrs)
	}
	b.points++
}

type groupKey struct{ name, typ, unit string }

// newMetric starts the Metric of a name, type and unit.
func newMetric(m pmetric.Metric, p *point) pmetric.Metric {
	// "name", "unit"
	m.SetName(p.name)
	m.SetUnit(UCUM(p.unit))
	// "type"
	switch p.typ {
	case TypeCounter:
		sum := m.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		sum.SetIsMonotonic(true)
	case TypeGauge:
		m.SetEmptyGauge()
	case TypeDistribution:
		m.SetEmptyExponentialHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	}
	return m
}

// putPoint appends p's data point to m and returns its attributes.
func putPoint(m pmetric.Metric, p *point) pcommon.Map {
	switch p.typ {
	case TypeCounter:
		dp := m.Sum().DataPoints().AppendEmpty()
		putNumberPoint(dp, p)
		if p.value.float() < 0 {
			m.Sum().SetIsMonotonic(false) // SDKs do not refuse negative counts
		}
		return dp.Attributes()
	case TypeGauge:
		dp := m.Gauge().DataPoints().AppendEmpty()
		putNumberPoint(dp, p)
		return dp.Attributes()
	default: // TypeDistribution
		dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
		putDistribution(dp, p)
		return dp.Attributes()
	}
}

func putNumberPoint(dp pmetric.NumberDataPoint, p *point) {
	// "timestamp": a delta of one observation starts and ends at it
	dp.SetStartTimestamp(p.ts)
	dp.SetTimestamp(p.ts)
	// "value": Int for integers, else Double
	if p.value.isInt {
		dp.SetIntValue(p.value.i)
	} else {
		dp.SetDoubleValue(p.value.f)
	}
	putAttributesAndExemplar(dp.Attributes(), dp.Exemplars(), p)
}

// observationAttribute is the attribute of one observation, not of its
// series: as a point attribute every observation would be a series of its
// own (JavaScript numbers its observations within a millisecond).
const observationAttribute = sentryattr.TimestampSequence

// putAttributesAndExemplar writes p's attributes as the point's, and the
// one of the observation (see observationAttribute) with "trace_id" and
// "span_id" onto an exemplar of the value.
func putAttributesAndExemplar(attrs pcommon.Map, exemplars pmetric.ExemplarSlice, p *point) {
	p.attrs.MoveTo(attrs)
	if p.traceID.IsEmpty() && p.observed.Len() == 0 {
		return
	}
	ex := exemplars.AppendEmpty()
	putExemplar(ex, p)
	if p.observed.Len() > 0 {
		p.observed.MoveTo(ex.FilteredAttributes())
	}
}

func putExemplar(ex pmetric.Exemplar, p *point) {
	ex.SetTimestamp(p.ts)
	ex.SetTraceID(p.traceID)
	ex.SetSpanID(p.spanID)
	if p.value.isInt {
		ex.SetIntValue(p.value.i)
	} else {
		ex.SetDoubleValue(p.value.f)
	}
}

func putOthers(attrs pcommon.Map, l *sentrysignal.Limiter, members *sentrysignal.Entry, depth int) {
	for _, m := range members.Others(known) {
		l.PutAny(attrs, AttrPrefix+m.Key, m.Value, depth)
	}
}

package sentrymetric

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// StatsdItemType is the envelope item type of Sentry's legacy metrics, one
// bucket per line: name@unit:value[:value…]|type|#tag:value,…|T<seconds>.
const StatsdItemType = "statsd"

// MetadataStatsdType names, in a Metric's metadata, the statsd type it was
// written from (c, d, g, s): gauges and sets are both OTLP Gauges.
const MetadataStatsdType = "sentry.statsd.type"

// statsdLine is one decoded bucket.
type statsdLine struct {
	name, unit, typ string
	values          []number
	tags            [][2]string
	ts              pcommon.Timestamp
}

// StatsdMetrics is the router's contract for a "statsd" item: one data
// point per bucket, and the resource the tags of each metric's first
// bucket name (sentry.release, sentry.environment, sentry.sdk.*,
// server.address). Buckets of the same name, type and unit share one
// Metric: a counter is a delta Sum, a distribution a delta exponential
// histogram of its values, a gauge a Gauge of its last value, a set a
// Gauge of the number of distinct values. A line that cannot be read is
// dropped alone (a *sentrysignal.PartialError, Index = the line); a
// payload over the limits gives nothing.
func StatsdMetrics(payload []byte, opts sentrysignal.Options) (sentrysignal.Metrics, error) {
	opts = opts.WithDefaults()
	if err := opts.CheckSize(StatsdItemType, payload); err != nil {
		return sentrysignal.Metrics{}, err
	}
	lines := bytes.Split(bytes.TrimRight(payload, "\r\n"), []byte("\n"))
	if len(lines) > opts.MaxItems {
		return sentrysignal.Metrics{}, sentrysignal.PayloadError(StatsdItemType, "", "more lines than the limit", nil)
	}
	b := statsdBatch{
		partial: sentrysignal.PartialError{Item: StatsdItemType},
		metrics: pmetric.NewMetricSlice(),
		groups:  map[groupKey]pmetric.Metric{},
		lim:     sentrysignal.NewLimiter(opts),
	}
	for i, raw := range lines {
		b.add(i, raw)
	}
	return sentrysignal.MetricsOf(b.facts, b.metrics, b.points), b.partial.Err()
}

// statsdBatch is the metrics of one statsd item being written.
type statsdBatch struct {
	partial sentrysignal.PartialError
	facts   sentrysignal.Facts
	metrics pmetric.MetricSlice
	groups  map[groupKey]pmetric.Metric
	lim     *sentrysignal.Limiter
	points  int
}

// add writes line i; a blank line is none.
func (b *statsdBatch) add(i int, raw []byte) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	l, err := parseStatsdLine(string(raw))
	if err != nil {
		b.partial.Add(sentrysignal.EntryError(StatsdItemType, i, "", "not a statsd bucket", err))
		return
	}
	key := groupKey{l.name, l.typ, l.unit}
	m, ok := b.groups[key]
	var res *sentryresource.Resource
	if !ok {
		m = newStatsdMetric(b.metrics.AppendEmpty(), &l)
		b.groups[key] = m
		res = new(sentryresource.Resource)
	}
	putStatsdPoint(m, &l, b.lim, res)
	if res != nil {
		b.facts.Resource.Fill(*res)
	}
	b.points++
}

func newStatsdMetric(m pmetric.Metric, l *statsdLine) pmetric.Metric {
	// name, @unit
	m.SetName(l.name)
	m.SetUnit(UCUM(l.unit))
	m.Metadata().PutStr(MetadataStatsdType, l.typ)
	// |type
	switch l.typ {
	case "c":
		sum := m.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		sum.SetIsMonotonic(true)
	case "d":
		m.SetEmptyExponentialHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	default: // g, s
		m.SetEmptyGauge()
	}
	return m
}

// putStatsdPoint appends l's data point to m; with res, the tags that
// name the program are noted in it.
func putStatsdPoint(m pmetric.Metric, l *statsdLine, lim *sentrysignal.Limiter, res *sentryresource.Resource) {
	attrs := appendStatsdPoint(m, l)
	// #tags
	keys := make([]string, len(l.tags))
	for i, t := range l.tags {
		keys[i] = t[0]
	}
	values, kept := lim.Entries(attrs, keys)
	for i, t := range l.tags {
		if !kept[i] {
			continue
		}
		values[i].SetStr(t[1])
		if res != nil {
			sentrysignal.NoteResourceAttribute(res, t[0], t[1])
		}
	}
}

// appendStatsdPoint appends the point of l's values by its type and
// returns its attributes.
func appendStatsdPoint(m pmetric.Metric, l *statsdLine) pcommon.Map {
	switch l.typ {
	case "c":
		dp := m.Sum().DataPoints().AppendEmpty()
		setNumber(dp, l.values[0], l.ts)
		if l.values[0].float() < 0 {
			m.Sum().SetIsMonotonic(false)
		}
		return dp.Attributes()
	case "d":
		return appendStatsdDistribution(m, l)
	case "g": // last:min:max:sum:count, or one value: the last
		dp := m.Gauge().DataPoints().AppendEmpty()
		setNumber(dp, l.values[0], l.ts)
		return dp.Attributes()
	default: // "s": the distinct values seen in the bucket
		dp := m.Gauge().DataPoints().AppendEmpty()
		setNumber(dp, number{isInt: true, i: int64(distinct(l.values))}, l.ts)
		return dp.Attributes()
	}
}

// appendStatsdDistribution appends a distribution's values as one
// exponential histogram point.
func appendStatsdDistribution(m pmetric.Metric, l *statsdLine) pcommon.Map {
	dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(l.ts)
	dp.SetTimestamp(l.ts)
	values := make([]float64, len(l.values))
	for i, v := range l.values {
		values[i] = v.float()
	}
	sentrysignal.PutObservations(dp, values)
	return dp.Attributes()
}

func setNumber(dp pmetric.NumberDataPoint, v number, ts pcommon.Timestamp) {
	dp.SetStartTimestamp(ts)
	dp.SetTimestamp(ts)
	if v.isInt {
		dp.SetIntValue(v.i)
	} else {
		dp.SetDoubleValue(v.f)
	}
}

func distinct(values []number) int {
	seen := make(map[float64]bool, len(values))
	for _, v := range values {
		seen[v.float()] = true
	}
	return len(seen)
}

// parseStatsdLine reads name@unit:values|type then the sections #tags and
// T<seconds>; sections it does not know (a sample rate) are skipped.
func parseStatsdLine(line string) (statsdLine, error) {
	sections := strings.Split(line, "|")
	if len(sections) < 2 {
		return statsdLine{}, errors.New("no type section")
	}
	var l statsdLine
	head, values, ok := strings.Cut(sections[0], ":")
	if !ok || head == "" {
		return l, errors.New("no name and values")
	}
	l.name, l.unit, _ = strings.Cut(head, "@")
	l.typ = sections[1]
	if !statsdTypes[l.typ] {
		return l, errors.New("type is not c, d, g or s")
	}
	if err := l.readValues(values); err != nil {
		return l, err
	}
	return l, l.readSections(sections[2:])
}

// statsdTypes are the bucket types: counter, distribution, gauge, set.
var statsdTypes = map[string]bool{"c": true, "d": true, "g": true, "s": true}

// readValues reads the values, as many as the type takes.
func (l *statsdLine) readValues(values string) error {
	for _, v := range strings.Split(values, ":") {
		n, err := readNumber(jsonNumber(v))
		if err != nil {
			return errors.New("value is not a number: " + v)
		}
		l.values = append(l.values, n)
	}
	return l.checkValueCount()
}

// checkValueCount refuses a gauge of other than one value or five
// (last:min:max:sum:count) and a counter of more than one.
func (l *statsdLine) checkValueCount() error {
	switch {
	case l.typ == "g" && len(l.values) != 1 && len(l.values) != 5:
		return errors.New("a gauge has one value or last:min:max:sum:count")
	case l.typ == "c" && len(l.values) != 1:
		return errors.New("a counter has one value")
	}
	return nil
}

// readSections reads #tags and T<seconds>, which is required.
func (l *statsdLine) readSections(sections []string) error {
	hasTS := false
	for _, s := range sections {
		switch {
		case strings.HasPrefix(s, "#"):
			l.tags = parseTags(s[1:])
		case strings.HasPrefix(s, "T"):
			// whole seconds, in the range every Sentry timestamp is read
			// in (1970–2262: nanoseconds that fit an int64)
			ts, err := statsdTimestamp(s[1:])
			if err != nil {
				return errors.New("timestamp is not seconds: " + s)
			}
			l.ts, hasTS = ts, true
		}
	}
	if !hasTS {
		return errors.New("no T<seconds> section")
	}
	return nil
}

// statsdTimestamp reads the digits of a T section as seconds.
func statsdTimestamp(digits string) (pcommon.Timestamp, error) {
	if _, err := strconv.ParseUint(digits, 10, 64); err != nil {
		return 0, err
	}
	return sentrysignal.TimestampOf(json.Number(digits))
}

// parseTags reads k:v,k:v; values are unescaped as Sentry escapes them.
func parseTags(s string) [][2]string {
	var tags [][2]string
	for _, kv := range strings.Split(s, ",") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, ":")
		tags = append(tags, [2]string{k, unescapeTag(v)})
	}
	return tags
}

var tagUnescaper = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r", `\t`, "\t", `\u{7c}`, "|", `\u{2c}`, ",")

func unescapeTag(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	return tagUnescaper.Replace(v)
}

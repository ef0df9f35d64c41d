package sentrymetric

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// decodePoint reads one metric of a container into p (the batch's, reset
// for each metric, as is l); everything that can fail fails here, before
// any Metric is started for it.
func decodePoint(p *point, l *sentrysignal.Limiter, ids *sentrysignal.IDMemo, entry any, index int) *sentrysignal.DecodeError {
	members, ok := entry.(*sentrysignal.Entry)
	if !ok {
		return sentrysignal.EntryError(ItemType, index, "", "not a JSON object", nil)
	}
	*p = point{attrs: reusedMap(p.attrs)}
	d := pointDecoder{members: members, index: index, p: p, l: l, ids: ids}
	for _, step := range [...]func() *sentrysignal.DecodeError{d.readSeries, d.readTimestamp, d.readValue, d.readIDs, d.readAttributes} {
		if de := step(); de != nil {
			return de
		}
	}
	return nil
}

// pointDecoder reads the members of one metric into its point.
type pointDecoder struct {
	members *sentrysignal.Entry
	ids     *sentrysignal.IDMemo
	index   int
	p       *point
	l       *sentrysignal.Limiter
}

func (d *pointDecoder) fail(field, reason string, err error) *sentrysignal.DecodeError {
	return sentrysignal.EntryError(ItemType, d.index, field, reason, err)
}

// readSeries: "name", "type", "unit"
func (d *pointDecoder) readSeries() *sentrysignal.DecodeError {
	d.p.name = d.members.Str("name")
	d.p.typ = d.members.Str("type")
	d.p.unit = d.members.Str("unit")
	if d.p.name == "" {
		return d.fail("name", "missing", nil)
	}
	if d.p.typ != TypeCounter && d.p.typ != TypeGauge && d.p.typ != TypeDistribution {
		return d.fail("type", "not counter, gauge or distribution", nil)
	}
	return nil
}

// readTimestamp: "timestamp"
func (d *pointDecoder) readTimestamp() *sentrysignal.DecodeError {
	ts, err := d.members.Timestamp("timestamp")
	if err != nil {
		return d.fail("timestamp", "not a timestamp", err)
	}
	d.p.ts = ts
	return nil
}

// readValue: "value"
func (d *pointDecoder) readValue() *sentrysignal.DecodeError {
	v, err := readNumber(d.members.Get("value"))
	if err != nil {
		return d.fail("value", "not a number", err)
	}
	d.p.value = v
	return nil
}

// readIDs: "trace_id", "span_id"
func (d *pointDecoder) readIDs() *sentrysignal.DecodeError {
	var err error
	if s := d.members.Str("trace_id"); s != "" {
		if d.p.traceID, err = d.ids.TraceID(s); err != nil {
			return d.fail("trace_id", "not a trace id", err)
		}
	}
	if s := d.members.Str("span_id"); s != "" {
		if d.p.spanID, err = d.ids.SpanID(s); err != nil {
			return d.fail("span_id", "not a span id", err)
		}
	}
	return nil
}

// readAttributes: "attributes", typed; the other members →
// sentry.payload.<member>
func (d *pointDecoder) readAttributes() *sentrysignal.DecodeError {
	if a := d.members.Get("attributes"); a != nil {
		err := d.l.PutEntryAttributes(d.p.attrs, a, &d.p.resource)
		switch {
		case errors.Is(err, sentrysignal.ErrNotObject):
			return d.fail("attributes", "not an object", nil)
		case err != nil:
			return d.fail("attributes", "not typed attributes", err)
		}
	}
	putOthers(d.p.attrs, d.l, d.members, d.l.MaxDepth())
	return nil
}

// readNumber reads "value": an integer stays one; NaN and infinities
// (which statsd text could spell) are refused.
func readNumber(x any) (number, error) {
	n, ok := x.(json.Number)
	if !ok {
		return number{}, sentrysignal.ErrMissing
	}
	if sentrysignal.IsIntegerText(string(n)) {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return number{isInt: true, i: i}, nil
		}
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return number{}, fmt.Errorf("not a finite number: %.40s", n)
	}
	return number{f: f}, nil
}

// jsonNumber lets readNumber read a statsd value: a decimal number as text.
func jsonNumber(s string) any {
	if s == "" || strings.ContainsAny(s, "\"{}[]") {
		return nil
	}
	return json.Number(s)
}

// reusedMap is m emptied, or a new map when m is none yet: the point's
// attributes move into its data point (pcommon.Map.MoveTo leaves m empty
// and usable), so that a map made per metric was a seventh of a
// container's allocations.
func reusedMap(m pcommon.Map) pcommon.Map {
	if m == (pcommon.Map{}) {
		return pcommon.NewMap()
	}
	m.Clear()
	return m
}

package sentrymetric

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// decodePoint reads one metric of a container into p (the batch's, reset
// for each metric, as is l); everything that can fail fails here, before
// any Metric is started for it.
//
// The point's series is looked up in groups once its name, type and unit
// are read: the attributes that name the program are noted only for the
// first point of a series, whose resource is the batch's.
func decodePoint(p *point, l *sentrysignal.Limiter, ids *sentrysignal.IDMemo, groups map[groupKey]pmetric.Metric, entry any, index int) *sentrysignal.DecodeError {
	members, ok := entry.(*sentrysignal.Entry)
	if !ok {
		return sentrysignal.EntryError(ItemType, index, "", "not a JSON object", nil)
	}
	p.reset()
	d := pointDecoder{members: members, at: indexMembers(members), index: index, p: p, l: l, ids: ids, groups: groups}
	for _, step := range [...]func() *sentrysignal.DecodeError{d.readSeries, d.readTimestamp, d.readValue, d.readIDs, d.readAttributes} {
		if de := step(); de != nil {
			return de
		}
	}
	return nil
}

// memberIndex is where a metric's members are in its entry: the index of
// the last one sent of each key a metric maps, -1 when it was not sent;
// others says a member of another key was sent. One pass over the members
// finds them all, where a look-up by key each scanned the members again.
type memberIndex struct {
	timestamp, traceID, spanID, name, typ, value, unit, attributes int
	others                                                         bool
}

// slot is the place of member key in x; nil for a member no block maps.
func (x *memberIndex) slot(key string) *int {
	switch key {
	case "timestamp":
		return &x.timestamp
	case "trace_id":
		return &x.traceID
	case "span_id":
		return &x.spanID
	case "name":
		return &x.name
	case "type":
		return &x.typ
	case "value":
		return &x.value
	case "unit":
		return &x.unit
	case "attributes":
		return &x.attributes
	}
	return nil
}

// known says whether a member of a Sentry metric is mapped by its own
// block.
func known(member string) bool {
	var x memberIndex
	return x.slot(member) != nil
}

func indexMembers(e *sentrysignal.Entry) memberIndex {
	x := memberIndex{-1, -1, -1, -1, -1, -1, -1, -1, false}
	for i := range e.Len() {
		if at := x.slot(e.Key(i)); at != nil {
			*at = i
		} else {
			x.others = true
		}
	}
	return x
}

// pointDecoder reads the members of one metric into its point.
type pointDecoder struct {
	groups  map[groupKey]pmetric.Metric
	members *sentrysignal.Entry
	at      memberIndex
	ids     *sentrysignal.IDMemo
	index   int
	p       *point
	l       *sentrysignal.Limiter
}

func (d *pointDecoder) fail(field, reason string, err error) *sentrysignal.DecodeError {
	return sentrysignal.EntryError(ItemType, d.index, field, reason, err)
}

// str is member i when it was sent as a string, else "".
func (d *pointDecoder) str(i int) string {
	if i < 0 {
		return ""
	}
	s, _ := d.members.StringAt(i)
	return s
}

// readSeries: "name", "type", "unit"
func (d *pointDecoder) readSeries() *sentrysignal.DecodeError {
	d.p.name = d.str(d.at.name)
	d.p.typ = d.str(d.at.typ)
	d.p.unit = d.str(d.at.unit)
	if d.p.name == "" {
		return d.fail("name", "missing", nil)
	}
	if d.p.typ != TypeCounter && d.p.typ != TypeGauge && d.p.typ != TypeDistribution {
		return d.fail("type", "not counter, gauge or distribution", nil)
	}
	d.p.series, d.p.inSeries = d.groups[groupKey{d.p.name, d.p.typ, d.p.unit}]
	if !d.p.inSeries {
		d.p.resource = sentryresource.Resource{} // the new series' resource
	}
	return nil
}

// readTimestamp: "timestamp"
func (d *pointDecoder) readTimestamp() *sentrysignal.DecodeError {
	if d.at.timestamp < 0 {
		return d.fail("timestamp", "not a timestamp", sentrysignal.ErrMissing)
	}
	ts, err := d.members.TimestampAt(d.at.timestamp)
	if err != nil {
		return d.fail("timestamp", "not a timestamp", err)
	}
	d.p.ts = ts
	return nil
}

// readValue: "value"
func (d *pointDecoder) readValue() *sentrysignal.DecodeError {
	if d.at.value < 0 {
		return d.fail("value", "not a number", sentrysignal.ErrMissing)
	}
	text, ok := d.members.NumberAt(d.at.value)
	if !ok {
		return d.fail("value", "not a number", sentrysignal.ErrMissing)
	}
	v, err := readNumberText(string(text))
	if err != nil {
		return d.fail("value", "not a number", err)
	}
	d.p.value = v
	return nil
}

// readIDs: "trace_id", "span_id"
func (d *pointDecoder) readIDs() *sentrysignal.DecodeError {
	var err error
	if s := d.str(d.at.traceID); s != "" {
		if d.p.traceID, err = d.ids.TraceID(s); err != nil {
			return d.fail("trace_id", "not a trace id", err)
		}
	}
	if s := d.str(d.at.spanID); s != "" {
		if d.p.spanID, err = d.ids.SpanID(s); err != nil {
			return d.fail("span_id", "not a span id", err)
		}
	}
	return nil
}

// readAttributes: "attributes", typed; the other members →
// sentry.payload.<member>
func (d *pointDecoder) readAttributes() *sentrysignal.DecodeError {
	if i := d.at.attributes; i >= 0 {
		if a := d.members.At(i); a != nil {
			if typed, ok := a.(*sentrysignal.TypedAttributes); ok && !d.at.others {
				d.p.typed = typed
			}
			var res *sentryresource.Resource
			if !d.p.inSeries {
				res = &d.p.resource
			}
			err := d.l.PutEntryAttributesAside(d.p.attrs, a, res, observationAttribute, d.p.observed)
			switch {
			case errors.Is(err, sentrysignal.ErrNotObject):
				return d.fail("attributes", "not an object", nil)
			case err != nil:
				return d.fail("attributes", "not typed attributes", err)
			}
		}
	}
	if d.at.others {
		putOthers(d.p.attrs, d.l, d.members, d.l.MaxDepth())
	}
	return nil
}

// readNumber reads "value": an integer stays one; NaN and infinities
// (which statsd text could spell) are refused.
func readNumber(x any) (number, error) {
	n, ok := x.(json.Number)
	if !ok {
		return number{}, sentrysignal.ErrMissing
	}
	return readNumberText(string(n))
}

// readNumberText is readNumber of a number's text. The text is not kept,
// not even by its error, so that reading the payload's bytes as one
// copies them on the stack.
func readNumberText(text string) (number, error) {
	if sentrysignal.IsIntegerText(text) {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return number{isInt: true, i: i}, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return number{}, fmt.Errorf("not a finite number: %.40s", strings.Clone(text))
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

// emptyMap empties *m, or makes it when it is none yet: the point's
// attributes move into its data point (pcommon.Map.MoveTo leaves m empty
// and usable), so that a map made per metric was a seventh of a
// container's allocations.
func emptyMap(m *pcommon.Map) {
	if *m == (pcommon.Map{}) {
		*m = pcommon.NewMap()
		return
	}
	m.Clear()
}

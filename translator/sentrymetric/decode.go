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

// decodePoint reads one metric of a container; everything that can fail
// fails here, before any Metric is started for it.
func decodePoint(entry any, opts sentrysignal.Options, index int) (*point, *sentrysignal.DecodeError) {
	fail := func(field, reason string, err error) (*point, *sentrysignal.DecodeError) {
		return nil, sentrysignal.EntryError(ItemType, index, field, reason, err)
	}
	members, ok := entry.(map[string]any)
	if !ok {
		return fail("", "not a JSON object", nil)
	}
	p := &point{
		name: sentrysignal.Str(members, "name"),
		typ:  sentrysignal.Str(members, "type"),
		unit: sentrysignal.Str(members, "unit"),
	}
	if p.name == "" {
		return fail("name", "missing", nil)
	}
	if p.typ != TypeCounter && p.typ != TypeGauge && p.typ != TypeDistribution {
		return fail("type", "not counter, gauge or distribution", nil)
	}
	var err error
	if p.ts, err = sentrysignal.TimestampOf(members["timestamp"]); err != nil {
		return fail("timestamp", "not a timestamp", err)
	}
	if p.value, err = readNumber(members["value"]); err != nil {
		return fail("value", "not a number", err)
	}
	if s := sentrysignal.Str(members, "trace_id"); s != "" {
		if p.traceID, err = sentrysignal.TraceID(s); err != nil {
			return fail("trace_id", "not a trace id", err)
		}
	}
	if s := sentrysignal.Str(members, "span_id"); s != "" {
		if p.spanID, err = sentrysignal.SpanID(s); err != nil {
			return fail("span_id", "not a span id", err)
		}
	}
	p.attrs = pcommon.NewMap()
	l := sentrysignal.NewLimiter(opts)
	if a := members["attributes"]; a != nil {
		if err := l.PutEntryAttributes(p.attrs, a); errors.Is(err, sentrysignal.ErrNotObject) {
			return fail("attributes", "not an object", nil)
		} else if err != nil {
			return fail("attributes", "not typed attributes", err)
		}
	}
	putOthers(p.attrs, l, members, opts.MaxDepth)
	return p, nil
}

// readNumber reads "value": an integer stays one; NaN and infinities
// (which statsd text could spell) are refused.
func readNumber(x any) (number, error) {
	n, ok := x.(json.Number)
	if !ok {
		return number{}, sentrysignal.ErrMissing
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return number{isInt: true, i: i}, nil
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

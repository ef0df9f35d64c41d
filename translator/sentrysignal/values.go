package sentrysignal

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// IsNull reports whether raw is absent or the JSON null.
func IsNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// DecodeAny decodes one JSON value keeping integers apart from floats
// (json.Number), and refuses trailing data.
func DecodeAny(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	// More would pass a stray "]" or "}": anything but space is refused.
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) != 0 {
		return nil, errors.New("trailing data after the JSON value")
	}
	return x, nil
}

// PutJSON maps a free-form JSON value into v: objects become maps (keys in
// order), arrays slices, integers that fit int64 Int, other numbers Double,
// null the empty value. Below depth levels a value is kept as its compact
// JSON text, so a client cannot nest OTLP values without bound; maps hold
// at most MaxMapEntries entries.
func (l *Limiter) PutJSON(v pcommon.Value, raw json.RawMessage, depth int) error {
	x, err := DecodeAny(raw)
	if err != nil {
		return err
	}
	l.SetAny(v, x, depth)
	return nil
}

// SetAny maps a value decoded by DecodeAny (see PutJSON).
func (l *Limiter) SetAny(v pcommon.Value, x any, depth int) {
	switch t := x.(type) {
	case nil:
	case string:
		v.SetStr(t)
	case bool:
		v.SetBool(t)
	case json.Number:
		setNumber(v, t)
	case []any:
		if depth <= 0 {
			v.SetStr(compactText(t))
			return
		}
		s := v.SetEmptySlice()
		s.EnsureCapacity(len(t))
		for _, e := range t {
			l.SetAny(s.AppendEmpty(), e, depth-1)
		}
	case map[string]any:
		if depth <= 0 {
			v.SetStr(compactText(t))
			return
		}
		l.PutMap(v.SetEmptyMap(), t, depth-1)
	}
}

func setNumber(v pcommon.Value, n json.Number) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		v.SetInt(i)
		return
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		v.SetStr(string(n)) // out of float64's range: keep the digits
		return
	}
	v.SetDouble(f)
}

func compactText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return ""
	}
	return string(b)
}

// ToAny is PutJSON's inverse: the JSON value a pcommon value was mapped
// from (maps as map[string]any, Int as int64, Double as float64, the empty
// value as nil). Values kept as JSON text below the depth limit come back
// as strings.
func ToAny(v pcommon.Value) any {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeBool:
		return v.Bool()
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return v.Double()
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		out := make([]any, s.Len())
		for i := range out {
			out[i] = ToAny(s.At(i))
		}
		return out
	case pcommon.ValueTypeMap:
		out := make(map[string]any, v.Map().Len())
		for k, e := range v.Map().All() {
			out[k] = ToAny(e)
		}
		return out
	case pcommon.ValueTypeBytes:
		return v.Bytes().AsRaw()
	}
	return nil
}

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

// DecodeAny decodes one JSON value as encoding/json's Decoder does with
// UseNumber (integers kept apart from floats as json.Number), in one pass
// (see jsonParser), and refuses trailing data: anything but space after
// the value, a stray "]" or "}" included.
func DecodeAny(raw []byte) (any, error) {
	p := newParser(raw)
	defer p.release()
	x, err := p.value()
	if err != nil {
		return nil, err
	}
	// as before this parser: any Unicode space may follow the value
	if len(bytes.TrimSpace(raw[p.pos:])) != 0 {
		return nil, errors.New("trailing data after the JSON value")
	}
	return x, nil
}

// SetAny maps a value decoded by DecodeAny (see PutJSON).
func (l *Limiter) SetAny(v pcommon.Value, x any, depth int) {
	l.setAny(v, x, depth, nil, false)
}

// Omission names a member left out of the objects that are elements of
// an array under a member called In (at any depth): {Member: "vars", In:
// "frames"} leaves out stack frames' local variables. Writing a value
// with an Omission costs what writing it costs, where copying the value
// without the member first cost a map for every object of it.
type Omission struct {
	Member, In string
}

// leavesOut says whether member k of an object is left out: o names it
// and the object is in a list under o.In. A nil Omission leaves nothing
// out.
func (o *Omission) leavesOut(k string, inList bool) bool {
	return o != nil && inList && k == o.Member
}

// SetAnyOmitting is SetAny leaving out what omit names; the value written
// is the one SetAny writes of a copy of x without those members.
func (l *Limiter) SetAnyOmitting(v pcommon.Value, x any, depth int, omit Omission) {
	l.setAny(v, x, depth, &omit, false)
}

// PutAnyOmitting is Put and SetAnyOmitting.
func (l *Limiter) PutAnyOmitting(m pcommon.Map, key string, x any, depth int, omit Omission) {
	if v, ok := l.Put(m, key); ok {
		l.SetAnyOmitting(v, x, depth, omit)
	}
}

// setAny is SetAny; with omit, inList says x is an element (or nested in
// an element) of an array under a member called omit.In.
func (l *Limiter) setAny(v pcommon.Value, x any, depth int, omit *Omission, inList bool) {
	switch t := x.(type) {
	case nil:
	case string:
		v.SetStr(t)
	case bool:
		v.SetBool(t)
	case json.Number:
		setNumber(v, t)
	case []any:
		l.setList(v, t, depth, omit, inList)
	case map[string]any:
		if depth <= 0 {
			v.SetStr(compactText(omitted(t, omit, inList)))
			return
		}
		l.putMap(v.SetEmptyMap(), t, depth-1, omit, inList)
	}
}

// setList is setAny of an array: a slice, or its JSON text at the depth
// limit.
func (l *Limiter) setList(v pcommon.Value, list []any, depth int, omit *Omission, inList bool) {
	if depth <= 0 {
		v.SetStr(compactText(omitted(list, omit, inList)))
		return
	}
	s := v.SetEmptySlice()
	s.EnsureCapacity(len(list))
	for _, e := range list {
		l.setAny(s.AppendEmpty(), e, depth-1, omit, inList)
	}
}

// omitted is x without the members omit names (a copy where any is left
// out), for the JSON text of a value below the depth limit.
func omitted(x any, omit *Omission, inList bool) any {
	if omit == nil {
		return x
	}
	switch t := x.(type) {
	case map[string]any:
		return omittedMembers(t, omit, inList)
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = omitted(v, omit, inList)
		}
		return out
	}
	return x
}

// omittedMembers is omitted of an object.
func omittedMembers(obj map[string]any, omit *Omission, inList bool) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if !inList || k != omit.Member {
			out[k] = omitted(v, omit, k == omit.In)
		}
	}
	return out
}

func setNumber(v pcommon.Value, n json.Number) {
	if i, ok := intOf(string(n)); ok {
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

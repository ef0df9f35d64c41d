package sentrysignal

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Sentry's attribute type names.
const (
	TypeString  = "string"
	TypeBoolean = "boolean"
	TypeInteger = "integer"
	TypeDouble  = "double"
	TypeArray   = "array"
)

// PutTypedAttributes maps Sentry's typed attributes (an object of key →
// {type, value}) into m, in key order, keeping each declared type: an
// "integer" is Int even when its value is written 3.0 or "3", a "double"
// Double even when written 3, a "string" Str even when written 3 (its
// text), a "boolean" Bool also from "true". Attributes whose value is null
// are dropped.
func (l *Limiter) PutTypedAttributes(m pcommon.Map, raw json.RawMessage) error {
	if IsNull(raw) {
		return nil
	}
	x, err := DecodeAny(raw)
	if err != nil {
		return err
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return fmt.Errorf("attributes are a %T, not an object", x)
	}
	return l.PutTyped(m, obj)
}

// PutTyped is PutTypedAttributes for an object decoded by DecodeAny.
// Without Options.IncludeUserData it leaves out the attributes that
// identify a person (see PersonalAttribute), which SDKs add to logs and
// metrics when their sendDefaultPii is on. Past MaxMapEntries attributes
// in m the rest (in key order) are dropped and counted, but still checked:
// an attribute that is not of its type fails wherever it is.
func (l *Limiter) PutTyped(m pcommon.Map, attrs map[string]any) error {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		if l.opts.IncludeUserData || !PersonalAttribute(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if m.Len() == 0 && len(keys) >= minBulkKeys {
		return l.putTypedBulk(m, keys, attrs)
	}
	m.EnsureCapacity(m.Len() + min(len(keys), l.opts.MaxMapEntries))
	for _, k := range keys {
		val, ok, err := readTypedAttribute(attrs[k])
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if !ok {
			continue
		}
		if v, kept := l.Put(m, k); kept {
			l.setTyped(v, val)
		}
	}
	return nil
}

// putTypedBulk is PutTyped of many attributes into an empty map, in time
// linear in their number (see Entries). Every attribute is checked before
// any is put.
func (l *Limiter) putTypedBulk(m pcommon.Map, keys []string, attrs map[string]any) error {
	vals := make([]typedValue, 0, len(keys))
	present := keys[:0]
	for _, k := range keys {
		val, ok, err := readTypedAttribute(attrs[k])
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if ok {
			vals, present = append(vals, val), append(present, k)
		}
	}
	values, kept := l.Entries(m, present)
	for i, val := range vals {
		if kept[i] {
			l.setTyped(values[i], val)
		}
	}
	return nil
}

// legacyTypes are the members of the first log SDKs' typed values.
var legacyTypes = [...]struct{ member, typ string }{
	{"string_value", TypeString}, {"int_value", TypeInteger}, {"double_value", TypeDouble}, {"bool_value", TypeBoolean},
}

// readTypedAttribute reads one typed attribute; ok is false for one
// whose value is null, which is left out.
func readTypedAttribute(attr any) (val typedValue, ok bool, err error) {
	tv, isObj := attr.(map[string]any)
	if !isObj {
		if attr == nil {
			return typedValue{}, false, nil
		}
		return typedValue{}, false, fmt.Errorf("a typed attribute cannot be a %T", attr)
	}
	typ, x := Str(tv, "type"), tv["value"]
	for _, lt := range legacyTypes {
		if v, ok := tv[lt.member]; ok && v != nil {
			typ, x = lt.typ, v
		}
	}
	if x == nil {
		return typedValue{}, false, nil
	}
	val, err = readTyped(typ, x)
	return val, err == nil, err
}

// setTyped writes a typed attribute's value.
func (l *Limiter) setTyped(v pcommon.Value, val typedValue) {
	switch val.typ {
	case TypeInteger:
		v.SetInt(val.i)
	case TypeDouble:
		v.SetDouble(val.f)
	case TypeString:
		v.SetStr(val.s)
	case TypeBoolean:
		v.SetBool(val.b)
	default: // arrays and types this version does not know
		l.SetAny(v, val.x, l.opts.MaxDepth)
	}
}

// typedValue is one typed attribute's value, read and checked.
type typedValue struct {
	typ string
	x   any // the value as decoded, for the types without a setter
	i   int64
	f   float64
	s   string
	b   bool
}

// readTyped reads x as Sentry's type typ; other types are free-form JSON.
func readTyped(typ string, x any) (typedValue, error) {
	tv := typedValue{typ: typ, x: x}
	var err error
	switch typ {
	case TypeInteger:
		tv.i, err = asInt(x)
	case TypeDouble:
		tv.f, err = asFloat(x)
	case TypeString:
		tv.s, err = asString(x)
	case TypeBoolean:
		tv.b, err = asBool(x)
	}
	return tv, err
}

func asInt(x any) (int64, error) {
	var text string
	switch t := x.(type) {
	case json.Number:
		text = string(t)
	case string:
		text = t
	default:
		return 0, fmt.Errorf("integer attribute holds %T", x)
	}
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != float64(int64(f)) {
		return 0, fmt.Errorf("not an integer: %.40s", text)
	}
	return int64(f), nil
}

func asString(x any) (string, error) {
	switch x.(type) {
	case string, json.Number, bool:
		return Text(map[string]any{"": x}, ""), nil
	}
	return "", fmt.Errorf("string attribute holds %T", x)
}

func asBool(x any) (bool, error) {
	switch t := x.(type) {
	case bool:
		return t, nil
	case string:
		return strconv.ParseBool(t)
	}
	return false, fmt.Errorf("boolean attribute holds %T", x)
}

func asFloat(x any) (float64, error) {
	switch t := x.(type) {
	case json.Number:
		return strconv.ParseFloat(string(t), 64)
	case string:
		return strconv.ParseFloat(t, 64)
	}
	return 0, fmt.Errorf("double attribute holds %T", x)
}

// TypedAttribute is PutTypedAttributes' inverse for one value: Sentry's
// type name and the JSON value.
func TypedAttribute(v pcommon.Value) (typ string, value any) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return TypeString, v.Str()
	case pcommon.ValueTypeBool:
		return TypeBoolean, v.Bool()
	case pcommon.ValueTypeInt:
		return TypeInteger, v.Int()
	case pcommon.ValueTypeDouble:
		return TypeDouble, v.Double()
	}
	return TypeArray, ToAny(v)
}

// PersonalAttribute reports whether an attribute key names personal data:
// user.* (id, email, name, full_name, …) and client.address.
func PersonalAttribute(key string) bool {
	return strings.HasPrefix(key, "user.") || key == "client.address"
}

package sentrysignal

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// typedValue is one of Sentry's typed attributes: {"type": "integer",
// "value": 4711}, or the older {"int_value": 4711} form of the first log
// SDKs.
type typedValue struct {
	Type        string          `json:"type"`
	Value       json.RawMessage `json:"value"`
	StringValue json.RawMessage `json:"string_value"`
	IntValue    json.RawMessage `json:"int_value"`
	DoubleValue json.RawMessage `json:"double_value"`
	BoolValue   json.RawMessage `json:"bool_value"`
}

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
// Double even when written 3. Attributes whose value is null are dropped.
func PutTypedAttributes(m pcommon.Map, raw json.RawMessage, maxDepth int) error {
	if IsNull(raw) {
		return nil
	}
	var obj map[string]typedValue
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m.EnsureCapacity(m.Len() + len(keys))
	for _, k := range keys {
		if err := putTyped(m, k, obj[k], maxDepth); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func putTyped(m pcommon.Map, key string, tv typedValue, maxDepth int) error {
	typ, raw := tv.Type, tv.Value
	switch {
	case !IsNull(tv.StringValue):
		typ, raw = TypeString, tv.StringValue
	case !IsNull(tv.IntValue):
		typ, raw = TypeInteger, tv.IntValue
	case !IsNull(tv.DoubleValue):
		typ, raw = TypeDouble, tv.DoubleValue
	case !IsNull(tv.BoolValue):
		typ, raw = TypeBoolean, tv.BoolValue
	}
	if IsNull(raw) {
		return nil
	}
	x, err := DecodeAny(raw)
	if err != nil {
		return err
	}
	v := pcommon.NewValueEmpty()
	switch typ {
	case TypeInteger:
		i, err := asInt(x)
		if err != nil {
			return err
		}
		v.SetInt(i)
	case TypeDouble:
		f, err := asFloat(x)
		if err != nil {
			return err
		}
		v.SetDouble(f)
	default: // string, boolean, arrays and types this version does not know
		SetAny(v, x, maxDepth)
	}
	v.MoveTo(m.PutEmpty(key))
	return nil
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

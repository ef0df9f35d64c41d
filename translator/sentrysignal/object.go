package sentrysignal

import (
	"encoding/json"
	"strconv"
)

// Accessors of a JSON object decoded by DecodeAny. They never fail: a
// member of another type reads as absent, which keeps one odd field from
// costing the rest of a payload.

// Str returns obj[key] when it is a string.
func Str(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}

// Text returns obj[key] as text: strings as they are, numbers and booleans
// as JSON writes them (Sentry accepts a numeric user id or release).
func Text(obj map[string]any, key string) string {
	switch t := obj[key].(type) {
	case string:
		return t
	case json.Number:
		return string(t)
	case bool:
		return strconv.FormatBool(t)
	}
	return ""
}

// Obj returns obj[key] when it is an object.
func Obj(obj map[string]any, key string) map[string]any {
	m, _ := obj[key].(map[string]any)
	return m
}

// Arr returns obj[key] when it is an array.
func Arr(obj map[string]any, key string) []any {
	a, _ := obj[key].([]any)
	return a
}

// Bool returns obj[key] when it is a boolean.
func Bool(obj map[string]any, key string) (value, ok bool) {
	value, ok = obj[key].(bool)
	return value, ok
}

// IsIntegerText says whether s is what strconv.ParseInt reads in base 10:
// an optional sign and digits. Callers that try ParseInt before
// ParseFloat ask first, since a failed ParseInt allocates its error (a
// float in every timestamp and gauge).
func IsIntegerText(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// intOf is strconv.ParseInt of s in base 10, false where it fails,
// without making the error of a text that is no integer.
func intOf(s string) (int64, bool) {
	if !IsIntegerText(s) {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// Int returns obj[key] when it is an integer number.
func Int(obj map[string]any, key string) (int64, bool) {
	n, ok := obj[key].(json.Number)
	if !ok {
		return 0, false
	}
	return intOfNumber(n)
}

// intOfNumber is n when it is an integer, also written as a float with
// no fraction.
func intOfNumber(n json.Number) (int64, bool) {
	if i, ok := intOf(string(n)); ok {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// Float returns obj[key] when it is a number.
func Float(obj map[string]any, key string) (float64, bool) {
	n, ok := obj[key].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// Values returns the entries of a Sentry list interface, which SDKs write
// either as {"values": [...]} or as the bare array.
func Values(x any) []any {
	switch t := x.(type) {
	case []any:
		return t
	case map[string]any:
		v, _ := t["values"].([]any)
		return v
	}
	return nil
}

// DecodeObject reads a payload that must be one JSON object (see
// DecodeAny): it fails, naming item, when the payload is over the size
// limit, is not JSON or is not an object.
func DecodeObject(item string, payload []byte, opts Options) (map[string]any, error) {
	if err := opts.CheckSize(item, payload); err != nil {
		return nil, err
	}
	x, err := DecodeAny(payload)
	if err != nil {
		return nil, PayloadError(item, "", "not JSON", err)
	}
	doc, ok := x.(map[string]any)
	if !ok {
		return nil, PayloadError(item, "", "not a JSON object", nil)
	}
	return doc, nil
}

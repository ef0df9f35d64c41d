package sentrytrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// objectAttributes reads "data" (key → value) or, typed, span v2
// "attributes" (key → {"type", "value"}), in key order.
func objectAttributes(raw json.RawMessage, typed bool) ([]Attribute, error) {
	if isNull(raw) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	out := make([]Attribute, 0, len(obj))
	for k, v := range obj {
		val, err := attributeValue(v, typed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if val != nil {
			out = append(out, Attribute{Key: k, Value: val})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// attributeValue is the value of one attribute, unwrapped from span v2's
// {"type", "value"} when typed; nil for null.
func attributeValue(v json.RawMessage, typed bool) (any, error) {
	if typed {
		var tv struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(v, &tv); err != nil {
			return nil, err
		}
		v = tv.Value
	}
	if isNull(v) {
		return nil, nil
	}
	return value(v)
}

// tagAttributes reads "tags": an object, or the array of [key, value] pairs
// some SDKs write. Tag values are strings in Sentry; others are printed.
func tagAttributes(raw json.RawMessage) ([]Attribute, error) {
	if isNull(raw) {
		return nil, nil
	}
	read := tagObject
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		read = tagPairs
	}
	out, err := read(raw)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// tagPairs reads tags written as [[key, value], …].
func tagPairs(raw json.RawMessage) ([]Attribute, error) {
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, err
	}
	out := make([]Attribute, 0, len(pairs))
	for _, p := range pairs {
		var k string
		if err := json.Unmarshal(p[0], &k); err != nil {
			return nil, err
		}
		out = append(out, Attribute{Key: k, Value: tagText(p[1])})
	}
	return out, nil
}

// tagObject reads tags written as {key: value}.
func tagObject(raw json.RawMessage) ([]Attribute, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	out := make([]Attribute, 0, len(obj))
	for k, v := range obj {
		out = append(out, Attribute{Key: k, Value: tagText(v)})
	}
	return out, nil
}

func tagText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// mergeAttributes adds the tags whose keys data does not have; both are
// sorted by key, and so is the result.
func mergeAttributes(data, tags []Attribute) []Attribute {
	if len(tags) == 0 {
		return data
	}
	have := make(map[string]bool, len(data))
	for _, a := range data {
		have[a.Key] = true
	}
	for _, t := range tags {
		if !have[t.Key] {
			have[t.Key] = true
			data = append(data, t)
		}
	}
	sort.SliceStable(data, func(i, j int) bool { return data[i].Key < data[j].Key })
	return data
}

// userAttributes reads the PII-bearing "user" and "request" into
// attributes under semantic-convention names where one exists.
func userAttributes(user, request json.RawMessage) ([]Attribute, error) {
	out, err := userFields(user)
	if err != nil {
		return nil, fmt.Errorf("user: %w", err)
	}
	req, err := requestFields(request)
	if err != nil {
		return nil, err
	}
	return append(out, req...), nil
}

// userFields maps "user": id, email, username, ip_address.
func userFields(user json.RawMessage) ([]Attribute, error) {
	if isNull(user) {
		return nil, nil
	}
	var u struct {
		ID        json.RawMessage `json:"id"`
		Email     string          `json:"email"`
		Username  string          `json:"username"`
		IPAddress string          `json:"ip_address"`
	}
	if err := json.Unmarshal(user, &u); err != nil {
		return nil, err
	}
	var out []Attribute
	if !isNull(u.ID) {
		out = append(out, Attribute{Key: "user.id", Value: tagText(u.ID)})
	}
	return appendNonEmpty(out, Attribute{"user.email", u.Email}, Attribute{"user.name", u.Username},
		Attribute{"client.address", clientAddress(u.IPAddress)}), nil
}

// clientAddress is "ip_address", or "" for Sentry's "{{auto}}" (take it
// from the connection), which is not an address.
func clientAddress(ip string) string {
	if ip == "{{auto}}" {
		return ""
	}
	return ip
}

// requestFields maps "request": url, method, and each header as
// http.request.header.<name>.
func requestFields(request json.RawMessage) ([]Attribute, error) {
	if isNull(request) {
		return nil, nil
	}
	var r struct {
		URL     string          `json:"url"`
		Method  string          `json:"method"`
		Headers json.RawMessage `json:"headers"`
	}
	if err := json.Unmarshal(request, &r); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	out := appendNonEmpty(nil, Attribute{"url.full", r.URL}, Attribute{"http.request.method", r.Method})
	headers, err := tagAttributes(r.Headers)
	if err != nil {
		return nil, fmt.Errorf("request.headers: %w", err)
	}
	for _, h := range headers {
		out = append(out, Attribute{Key: "http.request.header." + strings.ToLower(h.Key), Value: h.Value})
	}
	return out, nil
}

// appendNonEmpty appends the attributes whose string value is not empty.
func appendNonEmpty(out []Attribute, attrs ...Attribute) []Attribute {
	for _, a := range attrs {
		if a.Value != "" {
			out = append(out, a)
		}
	}
	return out
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// value converts a JSON value to an attribute value: objects become their
// JSON text, since OTLP maps would let a client nest without bound.
func value(raw json.RawMessage) (any, error) {
	t := bytes.TrimSpace(raw)
	switch t[0] {
	case '"':
		var s string
		err := json.Unmarshal(t, &s)
		return s, err
	case 't', 'f':
		var b bool
		err := json.Unmarshal(t, &b)
		return b, err
	case '{':
		return objectText(t)
	case '[':
		return arrayValue(t)
	}
	return number(string(t))
}

// objectText is an object's compact JSON text.
func objectText(t []byte) (any, error) {
	if !json.Valid(t) {
		return nil, errors.New("invalid object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return nil, err
	}
	return buf.String(), nil
}

// arrayValue is an array's values without its nulls.
func arrayValue(t []byte) (any, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(t, &elems); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		v, err := elementValue(e)
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// elementValue is the value of an array's element: nil for null, and an
// array's JSON text for an array (OTLP attributes hold flat arrays).
func elementValue(e json.RawMessage) (any, error) {
	if isNull(e) {
		return nil, nil
	}
	v, err := value(e)
	if _, nested := v.([]any); nested {
		v = string(bytes.TrimSpace(e))
	}
	return v, err
}

// number reads an integer as int64 when it is one that fits, else float64.
func number(text string) (any, error) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("not a JSON value: %.40s", text)
	}
	if math.IsInf(f, 0) {
		return nil, fmt.Errorf("number out of range: %.40s", text)
	}
	return f, nil
}

package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/jsontext"
)

// Header lines are decoded by walking the top-level members of an object that
// json.Valid has already accepted, instead of unmarshalling into a map or a
// struct: a map costs an allocation per member (an envelope may carry 10^5
// tiny items), and encoding/json matches struct fields case-insensitively
// where Relay does not ("TYPE" is not "type").

// forEachMember calls fn with the raw key (without quotes, possibly escaped)
// and raw value of every member of obj, in order. obj must be valid JSON
// starting with '{'.
func forEachMember(obj []byte, fn func(key, value []byte) error) error {
	i := skipSpaceJSON(obj, 1)
	if obj[i] == '}' {
		return nil
	}
	for {
		keyEnd := jsontext.StringEnd(obj, i)
		key := obj[i+1 : keyEnd-1]
		i = skipSpaceJSON(obj, keyEnd)
		i = skipSpaceJSON(obj, i+1) // ':'
		valueEnd := jsontext.ValueEnd(obj, i)
		if err := fn(key, obj[i:valueEnd]); err != nil {
			return err
		}
		i = skipSpaceJSON(obj, valueEnd)
		if obj[i] == '}' {
			return nil
		}
		i = skipSpaceJSON(obj, i+1) // ','
	}
}

// memberName returns the key of a member as text; keys with escapes are rare
// and take the slow path.
func memberName(key []byte) string {
	for _, b := range key {
		if b == '\\' {
			var s string
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &s) == nil {
				return s
			}
			break
		}
	}
	return string(key)
}

// stringValue decodes an optional string member; null counts as absent.
// Invalid UTF-8 becomes U+FFFD, as encoding/json does, so a decoded header
// always writes back unchanged.
func stringValue(name string, raw []byte) (string, error) {
	switch raw[0] {
	case 'n':
		return "", nil
	case '"':
	default:
		return "", fmt.Errorf("%q must be a string, not %s", name, snippet(raw))
	}
	if inner := raw[1 : len(raw)-1]; isPlainString(inner) {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	return s, nil
}

// isPlainString reports whether a string's text needs no decoding: valid
// UTF-8 without escapes.
func isPlainString(inner []byte) bool {
	return bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner)
}

// snippet shortens a raw JSON value for an error message: a header line may
// be up to MaxHeaderBytes long and errors end up in logs.
func snippet(raw []byte) string {
	const max = 32
	if len(raw) <= max {
		return string(raw)
	}
	return string(raw[:max]) + "…"
}

func skipSpaceJSON(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

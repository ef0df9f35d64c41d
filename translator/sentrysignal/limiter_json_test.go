package sentrysignal

// Decode-and-write in one call, for the tests: the translators decode a
// payload once (DecodeAny, ScanContainer) and write from the decoded value.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// PutTyped is PutEntryAttributes for the "attributes" object as DecodeAny
// decodes it, a map: the reference the typed attributes ScanContainer
// reads are checked against.
func (l *Limiter) PutTyped(m pcommon.Map, attrs map[string]any) error {
	entries := make([]typedEntry, 0, len(attrs))
	for k, x := range attrs {
		entries = append(entries, typedEntry{key: k, x: x})
	}
	slices.SortFunc(entries, func(a, b typedEntry) int { return strings.Compare(a.key, b.key) })
	order := make([]int32, len(entries))
	for i := range order {
		order[i] = int32(i)
	}
	return l.putTypedEntries(m, &TypedAttributes{sent: entries, order: order}, nil, -1)
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

package sentrysignal_test

// The tests that read OTLP values back into Sentry's JSON with the reverse
// mappings of signaltest, which imports this package: an external test
// package avoids the import cycle.

import (
	"encoding/json"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// FuzzTimestamp: both readers agree, and a timestamp read back from
// Seconds is the same.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{`1795644001.234`, `"2026-11-25T22:00:04.123456Z"`, `1.5e9`, `"1795644001.5"`, `-1`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ts, err := sentrysignal.Timestamp(json.RawMessage(raw))
		x, derr := sentrysignal.DecodeAny(raw)
		if derr == nil {
			if ts2, err2 := sentrysignal.TimestampOf(x); (err == nil) != (err2 == nil) || (err == nil && ts2 != ts) {
				t.Fatalf("sentrysignal.Timestamp %d %v, sentrysignal.TimestampOf %d %v", ts, err, ts2, err2)
			}
		}
		if err == nil {
			if back, err := sentrysignal.Timestamp(json.RawMessage(signaltest.Seconds(ts))); err != nil || back != ts {
				t.Fatalf("%d → %s → %d %v", ts, signaltest.Seconds(ts), back, err)
			}
		}
	})
}

// FuzzPutJSON: any JSON maps within the depth limit and reads back.
func FuzzPutJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x",true,null,{"b":{"c":[[]]}}]}`), 2)
	f.Fuzz(func(t *testing.T, raw []byte, depth int) {
		depth = int(uint(depth)%10) + 1
		v := pcommon.NewValueEmpty()
		if err := sentrysignal.NewLimiter(sentrysignal.Options{}).PutJSON(v, raw, depth); err != nil {
			return
		}
		if got := nesting(v); got > depth+1 {
			t.Fatalf("nesting %d beyond the depth limit %d", got, depth)
		}
		_ = signaltest.ToAny(v)
	})
}

func nesting(v pcommon.Value) int {
	deepest := 0
	switch v.Type() {
	case pcommon.ValueTypeMap:
		for _, e := range v.Map().All() {
			deepest = max(deepest, nesting(e))
		}
		return deepest + 1
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().All() {
			deepest = max(deepest, nesting(e))
		}
		return deepest + 1
	}
	return 0
}

func TestSecondsRoundTrip(t *testing.T) {
	for _, ns := range []uint64{1764108001234000000, 1764108001000000000, 1764108001000000001} {
		got, err := sentrysignal.Timestamp(json.RawMessage(signaltest.Seconds(pcommon.Timestamp(ns))))
		if err != nil || uint64(got) != ns {
			t.Errorf("%d → %s → %d, %v", ns, signaltest.Seconds(pcommon.Timestamp(ns)), got, err)
		}
	}
}

func TestPutJSONDepthAndTypes(t *testing.T) {
	v := pcommon.NewValueEmpty()
	raw := `{"i":3,"f":3.5,"big":1e400,"s":"x","b":true,"n":null,"deep":{"a":{"b":[1]}}}`
	if err := sentrysignal.NewLimiter(sentrysignal.Options{}).PutJSON(v, json.RawMessage(raw), 2); err != nil {
		t.Fatal(err)
	}
	got := v.Map().AsRaw()
	// A null member is left out: it says what an absent one says.
	want := map[string]any{"i": int64(3), "f": 3.5, "big": "1e400", "s": "x", "b": true,
		"deep": map[string]any{"a": `{"b":[1]}`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(signaltest.ToAny(v), want) {
		t.Errorf("ToAny = %#v", signaltest.ToAny(v))
	}
	for _, trailing := range []string{`{} 1`, `0]`, `{}}`} {
		if err := sentrysignal.NewLimiter(sentrysignal.Options{}).PutJSON(v, json.RawMessage(trailing), 2); err == nil {
			t.Errorf("trailing data accepted: %s", trailing)
		}
	}
}

func TestPutTypedAttributes(t *testing.T) {
	raw := `{"s":{"type":"string","value":"x"},"i":{"type":"integer","value":4711},"i2":{"type":"integer","value":"12"},
		"i3":{"type":"integer","value":3.0},"d":{"type":"double","value":3},"b":{"type":"boolean","value":false},
		"old":{"int_value":7},"arr":{"type":"array","value":["a","b"]},"skip":{"type":"string","value":null},
		"new":{"type":"string[]","value":["x"]},"sn":{"type":"string","value":5},"bs":{"type":"boolean","value":"true"}}`
	m := pcommon.NewMap()
	if err := sentrysignal.NewLimiter(sentrysignal.Options{MaxDepth: 4}).PutTypedAttributes(m, json.RawMessage(raw)); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": "x", "i": int64(4711), "i2": int64(12), "i3": int64(3), "d": 3.0, "b": false,
		"old": int64(7), "arr": []any{"a", "b"}, "new": []any{"x"}, "sn": "5", "bs": true}
	if !reflect.DeepEqual(m.AsRaw(), want) {
		t.Errorf("got %#v\nwant %#v", m.AsRaw(), want)
	}
	d, _ := m.Get("d")
	if typ, val := signaltest.TypedAttribute(d); typ != sentrysignal.TypeDouble || val != 3.0 {
		t.Errorf("signaltest.TypedAttribute(d) = %s %v", typ, val)
	}
	for _, bad := range []string{`{"i":{"type":"integer","value":1.5}}`, `{"d":{"type":"double","value":"x"}}`, `[1]`,
		`{"b":{"type":"boolean","value":1}}`, `{"s":{"type":"string","value":{}}}`, `{"x":7}`} {
		if err := sentrysignal.NewLimiter(sentrysignal.Options{}).PutTypedAttributes(pcommon.NewMap(), json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

package sentrysignal

import (
	"encoding/json"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// FuzzTimestamp: both readers agree, and a timestamp read back from
// Seconds is the same.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{`1795644001.234`, `"2026-11-25T22:00:04.123456Z"`, `1.5e9`, `"1795644001.5"`, `-1`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ts, err := Timestamp(json.RawMessage(raw))
		x, derr := DecodeAny(raw)
		if derr == nil {
			if ts2, err2 := TimestampOf(x); (err == nil) != (err2 == nil) || (err == nil && ts2 != ts) {
				t.Fatalf("Timestamp %d %v, TimestampOf %d %v", ts, err, ts2, err2)
			}
		}
		if err == nil {
			if back, err := Timestamp(json.RawMessage(Seconds(ts))); err != nil || back != ts {
				t.Fatalf("%d → %s → %d %v", ts, Seconds(ts), back, err)
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
		if err := NewLimiter(Options{}).PutJSON(v, raw, depth); err != nil {
			return
		}
		if got := nesting(v); got > depth+1 {
			t.Fatalf("nesting %d beyond the depth limit %d", got, depth)
		}
		_ = ToAny(v)
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

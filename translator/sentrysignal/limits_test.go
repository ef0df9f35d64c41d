package sentrysignal

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestLimiterPut(t *testing.T) {
	cut := &Truncations{}
	l := NewLimiter(Options{MaxMapEntries: 2, Truncations: cut})
	m := pcommon.NewMap()
	l.PutStr(m, "a", "1")
	l.PutStr(m, "a", "2") // an update of a held key while not full
	l.PutStr(m, "b", "3")
	l.PutStr(m, "c", "4") // full: dropped
	l.PutStr(m, "a", "5") // full: dropped without a look-up, "a" keeps its value
	if got := m.AsRaw(); fmt.Sprint(got) != "map[a:2 b:3]" {
		t.Errorf("map %v, want a:2 b:3", got)
	}
	if l.Dropped() != 2 || l.DroppedCount() != 2 || cut.Attributes != 2 {
		t.Errorf("dropped %d (count %d), truncations %d; want 2", l.Dropped(), l.DroppedCount(), cut.Attributes)
	}
}

func TestLimiterNestedMaps(t *testing.T) {
	tests := []struct {
		name        string
		json        string
		max         int
		want        string
		wantDropped int
	}{
		{"within", `{"b":1,"a":{"y":2,"x":3}}`, 2, `map[a:map[x:3 y:2] b:1]`, 0},
		{"first keys in order kept", `{"d":1,"c":2,"b":3,"a":4}`, 2, `map[a:4 b:3]`, 2},
		{"nested counted too", `{"a":{"z":1,"y":2,"x":3},"b":[{"q":1,"p":2,"o":3}]}`, 2, `map[a:map[x:3 y:2] b:[map[o:3 p:2]]]`, 2},
		{"nulls are not entries", `{"a":null,"b":null,"c":1}`, 1, `map[c:1]`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLimiter(Options{MaxMapEntries: tt.max})
			v := pcommon.NewValueEmpty()
			if err := l.PutJSON(v, json.RawMessage(tt.json), 8); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(v.AsRaw()); got != tt.want || l.Dropped() != tt.wantDropped {
				t.Errorf("%s, %d dropped; want %s, %d", got, l.Dropped(), tt.want, tt.wantDropped)
			}
		})
	}
}

// TestLimiterTypedPastTheLimit: typed attributes past the limit are
// dropped but still checked.
func TestLimiterTypedPastTheLimit(t *testing.T) {
	l := NewLimiter(Options{MaxMapEntries: 1})
	m := pcommon.NewMap()
	if err := l.PutTypedAttributes(m, json.RawMessage(`{"a":{"type":"integer","value":1},"b":{"type":"integer","value":2}}`)); err != nil || m.Len() != 1 || l.Dropped() != 1 {
		t.Errorf("%v, %d kept, %d dropped", err, m.Len(), l.Dropped())
	}
	if err := NewLimiter(Options{MaxMapEntries: 1}).PutTypedAttributes(pcommon.NewMap(),
		json.RawMessage(`{"a":{"type":"integer","value":1},"b":{"type":"integer","value":"x"}}`)); err == nil {
		t.Error("a bad attribute past the limit was not refused")
	}
}

func TestLimiterDroppedCountSaturates(t *testing.T) {
	l := NewLimiter(Options{})
	l.drop(math.MaxUint32 + 10)
	if l.DroppedCount() != math.MaxUint32 {
		t.Errorf("DroppedCount = %d, want %d", l.DroppedCount(), uint32(math.MaxUint32))
	}
}

package loadgen

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSignals(t *testing.T) {
	signals, err := Signals("../../translator", 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, itemType string
		items          int
		gzip           bool
	}{
		{"ErrorEvent", "event", 0, false},
		{"LogContainer100", "log", 100, true},
		{"TraceMetricContainer100", "trace_metric", 100, true},
	}
	if len(signals) != len(want) {
		t.Fatalf("%d signals, want %d", len(signals), len(want))
	}
	for i, w := range want {
		s := signals[i]
		lines := bytes.Split(bytes.TrimSuffix(s.Envelope, []byte("\n")), []byte("\n"))
		if s.Name != w.name || s.ItemType != w.itemType || s.Gzip != w.gzip || len(lines) != 3 {
			t.Fatalf("signal %d: %s %s gzip %v, %d lines; want %+v", i, s.Name, s.ItemType, s.Gzip, len(lines), w)
		}
		var header struct {
			Type      string `json:"type"`
			ItemCount int    `json:"item_count"`
			Length    *int   `json:"length"`
		}
		if err := json.Unmarshal(lines[1], &header); err != nil || header.Type != w.itemType || header.ItemCount != w.items || header.Length != nil {
			t.Fatalf("%s item header %s (%v)", s.Name, lines[1], err)
		}
		var payload struct {
			Items     []json.RawMessage `json:"items"`
			Exception struct {
				Values []json.RawMessage `json:"values"`
			} `json:"exception"`
		}
		if err := json.Unmarshal(lines[2], &payload); err != nil {
			t.Fatalf("%s payload: %v", s.Name, err)
		}
		if len(payload.Items) != w.items || (w.items == 0 && len(payload.Exception.Values) != 2) {
			t.Fatalf("%s: %d items, %d exceptions", s.Name, len(payload.Items), len(payload.Exception.Values))
		}
	}
}

package sentrycheckin

import (
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestHostileAttributeCounts: a check-in with 20 000 unknown members, or
// a monitor_config of 20 000 keys, keeps 1 000 entries in the map and
// counts the rest in DroppedAttributesCount. Before: quadratic, ~3 s.
func TestHostileAttributeCounts(t *testing.T) {
	const n = 20_000
	many := func(prefix string) map[string]any {
		m := map[string]any{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("%s%06d", prefix, i)] = i
		}
		return m
	}
	top := many("x")
	top["monitor_slug"], top["status"] = "s", "ok"
	tests := []struct {
		name     string
		doc      map[string]any
		inMap    string
		wantKept int
	}{
		{"unknown members", top, "", 1000},
		{"monitor_config", map[string]any{"monitor_slug": "s", "status": "ok", "monitor_config": many("c")}, AttrMonitorConfig, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := json.Marshal(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			dst := plog.NewLogRecordSlice()
			if got, err := AppendLogs(payload, sentrysignal.Options{}, dst); got != 1 || err != nil {
				t.Fatalf("appended %d, %v", got, err)
			}
			lr := dst.At(0)
			m := lr.Attributes()
			if tt.inMap != "" {
				v, _ := m.Get(tt.inMap)
				m = v.Map()
			}
			// the record's own attributes (slug, status) come first and stay
			if _, ok := lr.Attributes().Get(AttrMonitorSlug); !ok || m.Len() != tt.wantKept || lr.DroppedAttributesCount() == 0 {
				t.Errorf("%d kept, %d dropped, slug kept %v; want %d kept and the rest dropped", m.Len(), lr.DroppedAttributesCount(), ok, tt.wantKept)
			}
		})
	}
}

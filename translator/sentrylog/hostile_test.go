package sentrylog

import (
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestHostileAttributeCounts: a log with 20 000 attributes keeps the first
// 1 000 in key order and counts the rest in DroppedAttributesCount, as
// does an otel_log (whose own dropped count is added to). Before: pdata's
// key scan made these quadratic (a 60 000-attribute log took seconds).
func TestHostileAttributeCounts(t *testing.T) {
	const n = 20_000
	typed := map[string]any{}
	var otlp, kv []map[string]any
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("a%06d", i)
		typed[k] = map[string]any{"type": "integer", "value": i}
		otlp = append(otlp, map[string]any{"key": k, "value": map[string]any{"intValue": i}})
		kv = append(kv, map[string]any{"key": k, "value": map[string]any{"boolValue": true}})
	}
	logItem := func(entry map[string]any) []byte {
		b, err := json.Marshal(map[string]any{"items": []any{entry}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	otelItem := func(entry map[string]any) []byte {
		b, err := json.Marshal(entry)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name        string
		appendLogs  func([]byte, sentrysignal.Options, plog.LogRecordSlice) (int, error)
		payload     []byte
		inMap       string
		wantKept    int
		wantDropped uint32
	}{
		{"log typed attributes", AppendLogs, logItem(map[string]any{"timestamp": 1.5, "body": "b", "attributes": typed}), "", 1000, n - 1000},
		{"log unknown member", AppendLogs, logItem(map[string]any{"timestamp": 1.5, "body": "b", "extra": manyKeys(n)}), "sentry.payload.extra", 1000, n - 1000},
		{"log body map", AppendLogs, logItem(map[string]any{"timestamp": 1.5, "body": manyKeys(n)}), "", 0, n - 1000},
		{"otel_log attributes", AppendOTelLog, otelItem(map[string]any{"attributes": otlp, "dropped_attributes_count": 5}), "", 1000, n - 1000 + 5},
		{"otel_log kvlist", AppendOTelLog, otelItem(map[string]any{"attributes": []any{map[string]any{"key": "m",
			"value": map[string]any{"kvlistValue": map[string]any{"values": kv}}}}}), "m", 1000, n - 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := plog.NewLogRecordSlice()
			if n, err := tt.appendLogs(tt.payload, sentrysignal.Options{}, dst); n != 1 || err != nil {
				t.Fatalf("appended %d, %v", n, err)
			}
			lr := dst.At(0)
			m := lr.Attributes()
			if tt.inMap != "" {
				v, _ := m.Get(tt.inMap)
				m = v.Map()
			}
			if m.Len() != tt.wantKept || lr.DroppedAttributesCount() != tt.wantDropped {
				t.Errorf("%d kept, %d dropped; want %d, %d", m.Len(), lr.DroppedAttributesCount(), tt.wantKept, tt.wantDropped)
			}
		})
	}
}

// TestHostileBadAttributeBeyondTheLimit: an attribute past the limit is
// still read, so a payload is refused for a bad one wherever it is.
func TestHostileBadAttributeBeyondTheLimit(t *testing.T) {
	attrs := []any{}
	for i := 0; i < 1500; i++ {
		attrs = append(attrs, map[string]any{"key": fmt.Sprint(i), "value": map[string]any{"intValue": 1}})
	}
	attrs = append(attrs, map[string]any{"key": "bad", "value": map[string]any{"intValue": "x"}})
	payload, err := json.Marshal(map[string]any{"attributes": attrs})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := AppendOTelLog(payload, sentrysignal.Options{}, plog.NewLogRecordSlice()); n != 0 || err == nil {
		t.Errorf("appended %d, %v; want the bad attribute refused", n, err)
	}
}

func manyKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("k%06d", i)] = i
	}
	return m
}

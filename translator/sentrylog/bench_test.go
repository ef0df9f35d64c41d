package sentrylog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// referenceLog is a Sentry log as a typed decoder would declare it.
type referenceLog struct {
	Timestamp      float64 `json:"timestamp"`
	TraceID        string  `json:"trace_id"`
	SpanID         string  `json:"span_id"`
	Level          string  `json:"level"`
	SeverityNumber int     `json:"severity_number"`
	Body           string  `json:"body"`
	Attributes     map[string]struct {
		Type  string `json:"type"`
		Value any    `json:"value"`
	} `json:"attributes"`
}

// container100 is the node container repeated to 99 logs (a full batch of
// the JavaScript SDK is 100).
func container100(b *testing.B) []byte {
	var in struct{ Items []json.RawMessage }
	if err := json.Unmarshal(signaltest.ReadTestdata(b, "node11_logs.json"), &in); err != nil {
		b.Fatal(err)
	}
	var items [][]byte
	for len(items) < 99 {
		for _, it := range in.Items {
			items = append(items, it)
		}
	}
	return append(append([]byte(`{"items":[`), bytes.Join(items, []byte(","))...), "]}"...)
}

func BenchmarkDecodeLogContainer(b *testing.B) {
	payload := container100(b)
	b.Run("sentrylog.AppendLogs", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if n, err := AppendLogs(payload, sentrysignal.Options{}, plog.NewLogRecordSlice()); err != nil || n != 99 {
				b.Fatal(n, err)
			}
		}
	})
	// the same records as OTLP protobuf, decoded as the otlp receiver
	// decodes a request: the yardstick of the receiver's speed
	logs := plog.NewLogs()
	if _, err := AppendLogs(payload, sentrysignal.Options{}, logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()); err != nil {
		b.Fatal(err)
	}
	otlp, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("otlp-protobuf.UnmarshalLogs", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(otlp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json.map", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(payload, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json.struct", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			var c struct{ Items []referenceLog }
			if err := json.Unmarshal(payload, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

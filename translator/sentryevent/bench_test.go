package sentryevent

import (
	"encoding/json"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// referenceEvent is the part of an event a typed decoder would declare:
// encoding/json decoding into the same fields as a struct.
type referenceEvent struct {
	EventID   string          `json:"event_id"`
	Timestamp json.RawMessage `json:"timestamp"`
	Level     string          `json:"level"`
	Message   json.RawMessage `json:"message"`
	Exception struct {
		Values []struct {
			Type       string         `json:"type"`
			Value      string         `json:"value"`
			Mechanism  map[string]any `json:"mechanism"`
			Stacktrace struct {
				Frames []map[string]any `json:"frames"`
			} `json:"stacktrace"`
		} `json:"values"`
	} `json:"exception"`
	Contexts    map[string]map[string]any `json:"contexts"`
	Tags        map[string]string         `json:"tags"`
	User        map[string]any            `json:"user"`
	Request     map[string]any            `json:"request"`
	Extra       map[string]any            `json:"extra"`
	Fingerprint []string                  `json:"fingerprint"`
	SDK         map[string]any            `json:"sdk"`
	Release     string                    `json:"release"`
	Environment string                    `json:"environment"`
	Platform    string                    `json:"platform"`
	ServerName  string                    `json:"server_name"`
	Transaction string                    `json:"transaction"`
}

// BenchmarkDecodeErrorEvent decodes the chained node error: this package's
// decode alone and with the mapping, against encoding/json into a map and
// into a struct of the same fields.
func BenchmarkDecodeErrorEvent(b *testing.B) {
	payload := signaltest.ReadTestdata(b, "node11_error_chained.json")
	opts := sentrysignal.Options{IncludeUserData: true}
	b.Run("sentryevent.Decode", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(payload, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sentryevent.AppendLogs", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendLogs(payload, opts, plog.NewLogRecordSlice()); err != nil {
				b.Fatal(err)
			}
		}
	})
	// the receiver's default: no personal data, frames' vars left out
	b.Run("sentryevent.AppendLogs.default", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendLogs(payload, sentrysignal.Options{}, plog.NewLogRecordSlice()); err != nil {
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
			var ev referenceEvent
			if err := json.Unmarshal(payload, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCapturedErrorEvent translates the captured 14 KB @sentry/node
// error (the one BenchmarkSignalsVsOTLP sends) with the receiver's
// default options: by the router's path, and by the map[string]any tree
// it replaced; and the same record as OTLP protobuf, unmarshaled (what
// the collector's otlp receiver does with it).
func BenchmarkCapturedErrorEvent(b *testing.B) {
	payload := signaltest.ReadTestdata(b, "node11_captured_event_2.json")
	ld := plog.NewLogs()
	if _, err := AppendLogs(payload, sentrysignal.Options{}, recordsOf(ld)); err != nil {
		b.Fatal(err)
	}
	otlp, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("otlp-protobuf", func(b *testing.B) {
		b.SetBytes(int64(len(otlp)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(otlp); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, path := range []struct {
		name   string
		append func([]byte, sentrysignal.Options, plog.LogRecordSlice) (int, error)
	}{{"payload", AppendLogs}, {"tree", appendLogsByTree}} {
		b.Run(path.name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := path.append(payload, sentrysignal.Options{}, plog.NewLogRecordSlice()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

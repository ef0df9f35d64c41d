package sentrylog

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

func TestAppendLogsFromSDKs(t *testing.T) {
	type want struct {
		body     string
		level    string
		severity plog.SeverityNumber
		ts       uint64
		spanID   string
		attrs    map[string]any
	}
	tests := []struct {
		file    string
		traceID string
		want    []want
	}{
		{"node11_logs.json", "2c9f4e8a1b7d4f60a3e5c7b9d1f20486", []want{
			// console.log("loading order %d", 4711): unformatted, no template
			{"loading order %d 4711", "info", 9, 1795644001234000000, "8a1b2c3d4e5f6071",
				map[string]any{"sentry.timestamp.sequence": int64(0), "sentry.origin": "auto.log.console"}},
			{"order 4711 shipped true", "info", 9, 1795644001236000000, "8a1b2c3d4e5f6071",
				map[string]any{"sentry.message.template": "order {} shipped {}", "sentry.message.parameter.0": int64(4711),
					"sentry.message.parameter.1": true, "sentry.timestamp.sequence": int64(1)}},
			{"checkout took 12.5 ms", "warn", 13, 1795644001237000000, "",
				map[string]any{"sentry.message.parameter.0": 12.5, "cart.items": int64(3)}},
		}},
		{"python268_logs.json", "6e1f0a2b3c4d45e6a7b8c9d0e1f2a3b4", []want{
			{"disk 91% full", "warn", 13, 1795644005000250000, "0123456789abcdef",
				map[string]any{"code.line.number": int64(33), "sentry.message.parameter.0": int64(91), "logger.name": "worker"}},
			{"export failed", "error", 17, 1795644005500000000, "", map[string]any{"sentry.sdk.version": "2.68.0"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			dst := plog.NewLogRecordSlice()
			n, err := AppendLogs(signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{}, dst)
			if err != nil || n != len(tt.want) || dst.Len() != n {
				t.Fatalf("AppendLogs = %d, %v (records %d), want %d", n, err, dst.Len(), len(tt.want))
			}
			for i, w := range tt.want {
				lr := dst.At(i)
				if lr.Body().Str() != w.body || lr.SeverityText() != w.level || lr.SeverityNumber() != w.severity {
					t.Errorf("[%d] body %q level %q %v", i, lr.Body().Str(), lr.SeverityText(), lr.SeverityNumber())
				}
				if uint64(lr.Timestamp()) != w.ts || lr.TraceID().String() != tt.traceID {
					t.Errorf("[%d] timestamp %d trace %s", i, lr.Timestamp(), lr.TraceID())
				}
				if got := spanIDText(lr); got != w.spanID {
					t.Errorf("[%d] span id %q, want %q", i, got, w.spanID)
				}
				for k, v := range w.attrs {
					if got, ok := lr.Attributes().Get(k); !ok || got.AsRaw() != v {
						t.Errorf("[%d] %s = %#v, want %#v", i, k, got.AsRaw(), v)
					}
				}
			}
		})
	}
}

func spanIDText(lr plog.LogRecord) string {
	if lr.SpanID().IsEmpty() {
		return ""
	}
	return lr.SpanID().String()
}

// One bad log costs only itself.
func TestBadEntryCostsOnlyItself(t *testing.T) {
	payload := `{"items":[
		{"timestamp":1795644001.2,"level":"info","body":"kept 1"},
		{"timestamp":"never","level":"info","body":"bad time"},
		{"timestamp":1795644001.3,"trace_id":"nothex","body":"bad trace"},
		{"timestamp":1795644001.4,"body":"bad attr","attributes":{"n":{"type":"integer","value":"x"}}},
		{"timestamp":1795644001.5,"body":"bad span","attributes":{"sentry.trace.parent_span_id":{"type":"string","value":"short"}}},
		7,
		{"timestamp":1795644001.6,"level":"info","body":"kept 2"}]}`
	dst := plog.NewLogRecordSlice()
	n, err := AppendLogs([]byte(payload), sentrysignal.Options{}, dst)
	var pe *sentrysignal.PartialError
	if n != 2 || dst.Len() != 2 || !errors.As(err, &pe) || pe.Dropped != 5 {
		t.Fatalf("AppendLogs = %d, %v (records %d)", n, err, dst.Len())
	}
	if dst.At(0).Body().Str() != "kept 1" || dst.At(1).Body().Str() != "kept 2" {
		t.Errorf("kept %q, %q", dst.At(0).Body().Str(), dst.At(1).Body().Str())
	}
	wantFields := []string{"timestamp", "trace_id", "attributes", "attributes.sentry.trace.parent_span_id", ""}
	for i, de := range pe.Errors {
		if de.Index != i+1 || de.Field != wantFields[i] {
			t.Errorf("error %d: index %d field %q, want %d %q (%v)", i, de.Index, de.Field, i+1, wantFields[i], de)
		}
	}
}

func TestContainerErrors(t *testing.T) {
	for _, payload := range []string{`{"items":`, `{"items":{}}`, `[]`} {
		dst := plog.NewLogRecordSlice()
		n, err := AppendLogs([]byte(payload), sentrysignal.Options{}, dst)
		var de *sentrysignal.DecodeError
		if n != 0 || dst.Len() != 0 || !errors.As(err, &de) || de.Item != "log" || de.Index != -1 {
			t.Errorf("%s: %d, %v", payload, n, err)
		}
	}
}

// logFromRecord reads a record written by AppendLogs back into a Sentry
// log: the "back" column of README.md.
func logFromRecord(lr plog.LogRecord) map[string]any {
	out := map[string]any{
		"timestamp":       signaltest.Seconds(lr.Timestamp()),
		"level":           lr.SeverityText(),
		"severity_number": int64(lr.SeverityNumber()),
		"body":            signaltest.ToAny(lr.Body()),
	}
	if !lr.TraceID().IsEmpty() {
		out["trace_id"] = lr.TraceID().String()
	}
	attrs := map[string]any{}
	for k, v := range lr.Attributes().All() {
		if member, ok := strings.CutPrefix(k, AttrPrefix); ok {
			out[member] = signaltest.ToAny(v)
			continue
		}
		typ, val := signaltest.TypedAttribute(v)
		attrs[k] = map[string]any{"type": typ, "value": val}
	}
	// a span id the attribute does not already carry was a top-level span_id
	if !lr.SpanID().IsEmpty() {
		if v, ok := lr.Attributes().Get(AttrParentSpanID); !ok || v.Str() != lr.SpanID().String() {
			out["span_id"] = lr.SpanID().String()
		}
	}
	if len(attrs) > 0 {
		out["attributes"] = attrs
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	payloads := map[string][]byte{
		"node11_logs.json":              signaltest.ReadTestdata(t, "node11_logs.json"),
		"python268_logs.json":           signaltest.ReadTestdata(t, "python268_logs.json"),
		"node11_captured_logs_1.json":   signaltest.ReadTestdata(t, "node11_captured_logs_1.json"),
		"python268_captured_log_1.json": signaltest.ReadTestdata(t, "python268_captured_log_1.json"),
		"go050_captured_log_1.json":     signaltest.ReadTestdata(t, "go050_captured_log_1.json"),
		"unknown members": []byte(`{"items":[{"timestamp":1795644001.5,"level":"info","severity_number":99,"body":{"k":[1,"x"]},
			"origin":"test","attributes":{"sentry.origin":{"type":"string","value":"manual"}}}]}`),
	}
	for name, payload := range payloads {
		t.Run(name, func(t *testing.T) {
			dst := plog.NewLogRecordSlice()
			if _, err := AppendLogs(payload, sentrysignal.Options{IncludeUserData: true}, dst); err != nil {
				t.Fatal(err)
			}
			var in struct{ Items []map[string]any }
			dec := json.NewDecoder(strings.NewReader(string(payload)))
			dec.UseNumber()
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			for i, want := range in.Items {
				// back: seconds, whichever form the SDK wrote (sentry-go writes RFC 3339)
				ts, err := sentrysignal.TimestampOf(want["timestamp"])
				if err != nil {
					t.Fatal(err)
				}
				want["timestamp"] = signaltest.Seconds(ts)
				if _, sent := want["severity_number"]; !sent {
					// back: the level's number when the SDK sent none
					want["severity_number"] = int64(sentrysignal.Severity(want["level"].(string)))
				}
				got := logFromRecord(dst.At(i))
				if !reflect.DeepEqual(normalize(t, got), normalize(t, want)) {
					gb, _ := json.Marshal(got)
					wb, _ := json.Marshal(want)
					t.Errorf("[%d] read back\n%s\nwant\n%s", i, gb, wb)
				}
			}
		})
	}
}

func normalize(t *testing.T, x any) any {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendOTelLog(t *testing.T) {
	// the otel_log payload of Sentry's logs spec, with the value kinds
	// OTLP/JSON allows
	payload := `{"severity_text":"info","severity_number":9,"body":{"string_value":"User John has logged in!"},
		"attributes":[{"key":"sentry.message.template","value":{"string_value":"User %s has logged in!"}},
			{"key":"sentry.message.parameters.0","value":{"string_value":"John"}},
			{"key":"attempt","value":{"int_value":"3"}},{"key":"ratio","value":{"doubleValue":0.5}},
			{"key":"ok","value":{"bool_value":true}},{"key":"raw","value":{"bytes_value":"AQI="}},
			{"key":"tags","value":{"array_value":{"values":[{"string_value":"a"},{"int_value":2}]}}},
			{"key":"ctx","value":{"kvlist_value":{"values":[{"key":"k","value":{"string_value":"v"}}]}}}],
		"time_unix_nano":"1795644001234000000","trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174"}`
	dst := plog.NewLogRecordSlice()
	n, err := AppendOTelLog([]byte(payload), sentrysignal.Options{}, dst)
	if err != nil || n != 1 {
		t.Fatalf("AppendOTelLog = %d, %v", n, err)
	}
	lr := dst.At(0)
	if lr.Body().Str() != "User John has logged in!" || lr.SeverityNumber() != 9 || lr.SeverityText() != "info" ||
		uint64(lr.Timestamp()) != 1795644001234000000 || lr.SpanID().String() != "eee19b7ec3c1b174" {
		t.Errorf("record %q %v %q %d %s", lr.Body().Str(), lr.SeverityNumber(), lr.SeverityText(), lr.Timestamp(), lr.SpanID())
	}
	want := map[string]any{"sentry.message.template": "User %s has logged in!", "sentry.message.parameters.0": "John",
		"attempt": int64(3), "ratio": 0.5, "ok": true, "raw": []byte{1, 2}, "tags": []any{"a", int64(2)},
		"ctx": map[string]any{"k": "v"}}
	if got := lr.Attributes().AsRaw(); !reflect.DeepEqual(got, want) {
		t.Errorf("attributes %#v\nwant %#v", got, want)
	}
	for _, bad := range []string{`{"time_unix_nano":"soon"}`, `{"trace_id":"x"}`, `{"body":{"bytes_value":"!"}}`, `[`} {
		dst := plog.NewLogRecordSlice()
		if n, err := AppendOTelLog([]byte(bad), sentrysignal.Options{}, dst); err == nil || n != 0 || dst.Len() != 0 {
			t.Errorf("%s accepted: %d %v", bad, n, err)
		}
	}
}

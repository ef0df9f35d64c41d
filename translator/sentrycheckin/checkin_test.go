package sentrycheckin

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

func TestAppendLogs(t *testing.T) {
	tests := []struct {
		file, body string
		severity   plog.SeverityNumber
		traceID    string
		attrs      map[string]any
	}{
		{"node11_checkin_in_progress.json", "nightly-export: in_progress", plog.SeverityNumberInfo, "2c9f4e8a1b7d4f60a3e5c7b9d1f20486",
			map[string]any{AttrID: "83a7c03ed0a04e1b97e2e3b18d38f244", AttrMonitorSlug: "nightly-export", AttrStatus: "in_progress"}},
		{"node11_checkin_ok.json", "nightly-export: ok", plog.SeverityNumberInfo, "2c9f4e8a1b7d4f60a3e5c7b9d1f20486",
			map[string]any{AttrStatus: "ok", AttrDuration: 1.234}},
		{"python_checkin_error_full_config.json", "hourly-sync: error", plog.SeverityNumberError, "",
			map[string]any{AttrStatus: "error", AttrDuration: 0.52, AttrID: "5f0e1d2c3b4a49588776655443322110"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			dst := plog.NewLogRecordSlice()
			if n, err := AppendLogs(signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{}, dst); n != 1 || err != nil {
				t.Fatalf("AppendLogs = %d, %v", n, err)
			}
			lr := dst.At(0)
			if lr.Body().Str() != tt.body || lr.SeverityNumber() != tt.severity || lr.EventName() != EventName || lr.TraceID().String() != tt.traceID {
				t.Errorf("record %q %v %q %s", lr.Body().Str(), lr.SeverityNumber(), lr.EventName(), lr.TraceID())
			}
			for k, want := range tt.attrs {
				if v, ok := lr.Attributes().Get(k); !ok || v.AsRaw() != want {
					t.Errorf("%s = %v, want %v", k, v.AsRaw(), want)
				}
			}
		})
	}
}

// checkInFromRecord reads the record back into the check-in's members;
// release and environment come from the resource.
func checkInFromRecord(lr plog.LogRecord, res sentryresource.Resource) map[string]any {
	out := map[string]any{}
	for k, v := range lr.Attributes().All() {
		switch k {
		case AttrID:
			out["check_in_id"] = v.Str()
		case AttrMonitorSlug:
			out["monitor_slug"] = v.Str()
		case AttrStatus:
			out["status"] = v.Str()
		case AttrDuration:
			out["duration"] = v.Double()
		case AttrMonitorConfig:
			out["monitor_config"] = signaltest.ToAny(v)
		case AttrContexts:
			out["contexts"] = signaltest.ToAny(v)
		default:
			out[strings.TrimPrefix(k, AttrPrefix)] = signaltest.ToAny(v)
		}
	}
	if res.Release != "" {
		out["release"] = res.Release
	}
	if res.Environment != "" {
		out["environment"] = res.Environment
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, file := range []string{"node11_checkin_in_progress.json", "node11_checkin_ok.json", "python_checkin_error_full_config.json",
		"node11_captured_checkin_1.json", "node11_captured_checkin_2.json", "python1910_captured_checkin.json",
		"go050_captured_check_in_1.json", "go050_captured_check_in_2.json"} {
		t.Run(file, func(t *testing.T) {
			payload := signaltest.ReadTestdata(t, file)
			c, err := Decode(payload, sentrysignal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lr := plog.NewLogRecord()
			c.PutLogRecord(lr, sentrysignal.Options{})
			var want map[string]any
			if err := json.Unmarshal(payload, &want); err != nil {
				t.Fatal(err)
			}
			if got := normalize(t, checkInFromRecord(lr, c.Resource)); !reflect.DeepEqual(got, want) {
				t.Errorf("read back %v\nwant %v", got, want)
			}
		})
	}
}

func normalize(t *testing.T, x any) any {
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

func TestErrors(t *testing.T) {
	tests := []struct{ payload, field string }{
		{`{"status":"ok"}`, "monitor_slug"},
		{`{"monitor_slug":"m"}`, "status"},
		{`{"monitor_slug":"m","status":"ok","check_in_id":"nope"}`, "check_in_id"},
		{`{"monitor_slug":"m","status":"ok","contexts":{"trace":{"trace_id":"12"}}}`, "contexts.trace.trace_id"},
		{`{"monitor_slug":"m","status":"ok","contexts":{"trace":{"span_id":"12"}}}`, "contexts.trace.span_id"},
		{`"m"`, ""},
		{`{`, ""},
	}
	for _, tt := range tests {
		dst := plog.NewLogRecordSlice()
		n, err := AppendLogs([]byte(tt.payload), sentrysignal.Options{}, dst)
		var de *sentrysignal.DecodeError
		if n != 0 || dst.Len() != 0 || !errors.As(err, &de) || de.Field != tt.field || de.Item != ItemType {
			t.Errorf("%s: %d, %v", tt.payload, n, err)
		}
	}
}

func FuzzAppendLogs(f *testing.F) {
	f.Add(signaltest.ReadTestdata(f, "node11_checkin_in_progress.json"))
	f.Add(signaltest.ReadTestdata(f, "python_checkin_error_full_config.json"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		dst := plog.NewLogRecordSlice()
		n, err := AppendLogs(payload, sentrysignal.Options{MaxDepth: 3}, dst)
		var de *sentrysignal.DecodeError
		if (err != nil && (!errors.As(err, &de) || n != 0 || dst.Len() != 0)) || (err == nil && (n != 1 || dst.Len() != 1)) {
			t.Fatalf("n=%d records=%d err=%v", n, dst.Len(), err)
		}
	})
}

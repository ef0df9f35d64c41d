package sentryevent

import (
	"errors"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func appendOne(t *testing.T, payload []byte, opts sentrysignal.Options) plog.LogRecord {
	t.Helper()
	dst := plog.NewLogRecordSlice()
	n, err := AppendLogs(payload, opts, dst)
	if err != nil || n != 1 || dst.Len() != 1 {
		t.Fatalf("AppendLogs = %d, %v (records %d)", n, err, dst.Len())
	}
	return dst.At(0)
}

func TestAppendLogsFromSDKs(t *testing.T) {
	tests := []struct {
		file      string
		body      string
		severity  plog.SeverityNumber
		level     string
		traceID   string
		spanID    string
		attrs     map[string]any // expected values (string, int64, float64, bool)
		absent    []string       // keys that must not be there
		uid       string
		timestamp uint64
	}{
		{
			file: "node11_capture_message.json", body: "order 4711 shipped",
			severity: plog.SeverityNumberInfo, level: "info",
			traceID: "2c9f4e8a1b7d4f60a3e5c7b9d1f20486", spanID: "8a1b2c3d4e5f6071",
			uid: "5b0c3f1a2e7d4c8f9a6b1d2e3f405162", timestamp: 1795644001234000000,
			attrs: map[string]any{"sentry.modules": nil, "sentry.breadcrumbs": nil, "sentry.exception": nil, "sentry.contexts": nil},
			// a captured message with a synthetic exception is not an exception
			absent: []string{"exception.type", "exception.message", "exception.stacktrace", "sentry.message", "sentry.release"},
		},
		{
			file: "node11_error_chained.json", body: "TypeError: could not load order 4711",
			severity: plog.SeverityNumberError, level: "error",
			traceID: "2c9f4e8a1b7d4f60a3e5c7b9d1f20486", spanID: "a1b2c3d4e5f60718",
			uid: "7d2e1f0a9b8c4d3e8f7a6b5c4d3e2f10", timestamp: 1795644002500000000,
			attrs: map[string]any{
				"exception.type": "TypeError", "exception.message": "could not load order 4711",
				"exception.stacktrace": "TypeError: could not load order 4711\n" +
					"    at loadOrder (/srv/shop/app.js:27:11)\n" +
					"    at Layer.handle [as handle_request] (/srv/shop/node_modules/express/lib/router/layer.js:95:5)\n" +
					"Caused by: Error: connect ECONNREFUSED 127.0.0.1:5432\n" +
					"    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)",
				"sentry.tags.region": "eu-1", "sentry.tags.tenant": "acme", "sentry.transaction": "GET /orders/:id",
			},
			absent: []string{"user.id", "user.email", "client.address", "url.full", "sentry.user.email", "sentry.request.cookies"},
		},
		{
			file: "browser11_error.json", body: "ReferenceError: checkout is not defined",
			severity: plog.SeverityNumberError, level: "error",
			traceID: "d4c3b2a1f0e9487d6c5b4a3928170615", spanID: "b1c2d3e4f5a60718",
			uid: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", timestamp: 1795644003771000000,
			attrs: map[string]any{"exception.type": "ReferenceError", "exception.message": "checkout is not defined"},
		},
		{
			file: "python1910_store_error.json", body: "ZeroDivisionError: division by zero",
			severity: plog.SeverityNumberError, level: "error",
			traceID: "6e1f0a2b3c4d45e6a7b8c9d0e1f2a3b4", spanID: "9f8e7d6c5b4a3210",
			uid: "c0ffee00c0ffee00c0ffee00c0ffee00", timestamp: 1795644004123456000,
			attrs: map[string]any{
				"exception.type":       "ZeroDivisionError",
				"exception.stacktrace": "ZeroDivisionError: division by zero\n    at <module> (/srv/worker/app.py:14)",
			},
		},
		{
			file: "python268_logging_error.json", body: "loading order 4711 failed",
			severity: plog.SeverityNumberError, level: "error",
			traceID: "6e1f0a2b3c4d45e6a7b8c9d0e1f2a3b4", spanID: "0123456789abcdef",
			uid: "1a2b3c4d5e6f708192a3b4c5d6e7f809", timestamp: 1795644005000250000,
			attrs:  map[string]any{"sentry.message.template": "loading order %s failed", "sentry.logger": "orders"},
			absent: []string{"exception.type", "sentry.logentry"},
		},
		{
			file: "python268_capture_message.json", body: "nightly export done",
			severity: plog.SeverityNumberInfo, level: "info",
			traceID: "6e1f0a2b3c4d45e6a7b8c9d0e1f2a3b4", spanID: "fedcba9876543210",
			uid: "ab12cd34ef56ab12cd34ef56ab12cd34", timestamp: 1795644006500000000,
			absent: []string{"sentry.message.template", "exception.type"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lr := appendOne(t, signaltest.ReadTestdata(t, tt.file), sentrysignal.Options{})
			if got := lr.Body().Str(); got != tt.body {
				t.Errorf("body = %q, want %q", got, tt.body)
			}
			if lr.SeverityNumber() != tt.severity || lr.SeverityText() != tt.level {
				t.Errorf("severity = %v %q, want %v %q", lr.SeverityNumber(), lr.SeverityText(), tt.severity, tt.level)
			}
			if got := lr.TraceID().String(); got != tt.traceID {
				t.Errorf("trace id = %s, want %s", got, tt.traceID)
			}
			if got := lr.SpanID().String(); got != tt.spanID {
				t.Errorf("span id = %s, want %s", got, tt.spanID)
			}
			if got := uint64(lr.Timestamp()); got != tt.timestamp {
				t.Errorf("timestamp = %d, want %d", got, tt.timestamp)
			}
			assertAttrs(t, lr.Attributes(), map[string]any{"log.record.uid": tt.uid})
			assertAttrs(t, lr.Attributes(), tt.attrs)
			for _, k := range tt.absent {
				if _, ok := lr.Attributes().Get(k); ok {
					t.Errorf("attribute %s is present", k)
				}
			}
		})
	}
}

// assertAttrs checks each key; a nil want only requires the key.
func assertAttrs(t *testing.T, attrs pcommon.Map, want map[string]any) {
	t.Helper()
	for k, w := range want {
		v, ok := attrs.Get(k)
		if !ok {
			t.Errorf("attribute %s missing", k)
			continue
		}
		if w != nil && v.AsRaw() != w {
			t.Errorf("attribute %s = %#v, want %#v", k, v.AsRaw(), w)
		}
	}
}

func TestPersonalData(t *testing.T) {
	payload := signaltest.ReadTestdata(t, "node11_error_chained.json")
	with := appendOne(t, payload, sentrysignal.Options{IncludeUserData: true})
	assertAttrs(t, with.Attributes(), map[string]any{
		"user.id": "u-17", "user.email": "ada@example.com", "client.address": "203.0.113.7",
		"url.full": "http://shop.local/orders/4711", "http.request.method": "GET", "url.query": "expand=items",
	})
	ua, _ := with.Attributes().Get("http.request.header.user-agent")
	if ua.Type() != pcommon.ValueTypeSlice || ua.Slice().At(0).Str() != "curl/8.14.1" {
		t.Errorf("user-agent header = %v", ua.AsRaw())
	}
	if got := frameVars(t, with); got == nil {
		t.Error("frame vars dropped although include_user_data is on")
	}
	without := appendOne(t, payload, sentrysignal.Options{})
	if got := frameVars(t, without); got != nil {
		t.Errorf("frame vars kept without include_user_data: %v", got)
	}

	browser := appendOne(t, signaltest.ReadTestdata(t, "browser11_error.json"), sentrysignal.Options{IncludeUserData: true})
	assertAttrs(t, browser.Attributes(), map[string]any{"sentry.user.ip_address": "{{auto}}"})
	if _, ok := browser.Attributes().Get("client.address"); ok {
		t.Error(`"{{auto}}" taken for an address`)
	}
}

// frameVars returns the vars of the in-app frame of the raised exception.
func frameVars(t *testing.T, lr plog.LogRecord) any {
	t.Helper()
	v, ok := lr.Attributes().Get("sentry.exception")
	if !ok {
		t.Fatal("sentry.exception missing")
	}
	values := v.Map().AsRaw()["values"].([]any)
	frames := values[1].(map[string]any)["stacktrace"].(map[string]any)["frames"].([]any)
	return frames[1].(map[string]any)["vars"]
}

func TestFramesKeepEveryField(t *testing.T) {
	lr := appendOne(t, signaltest.ReadTestdata(t, "node11_error_chained.json"), sentrysignal.Options{IncludeUserData: true})
	v, _ := lr.Attributes().Get("sentry.exception")
	values := v.Map().AsRaw()["values"].([]any)
	if len(values) != 2 {
		t.Fatalf("%d exceptions kept, want 2", len(values))
	}
	mech := values[0].(map[string]any)["mechanism"].(map[string]any)
	if mech["source"] != "cause" || mech["parent_id"] != int64(0) || mech["exception_id"] != int64(1) {
		t.Errorf("chained mechanism = %v", mech)
	}
	frame := values[1].(map[string]any)["stacktrace"].(map[string]any)["frames"].([]any)[1].(map[string]any)
	for _, k := range []string{"filename", "module", "function", "lineno", "colno", "in_app", "pre_context", "context_line", "post_context", "vars"} {
		if _, ok := frame[k]; !ok {
			t.Errorf("frame lost %q", k)
		}
	}
	if frame["vars"].(map[string]any)["db"].(map[string]any)["port"] != int64(5432) {
		t.Errorf("vars = %v", frame["vars"])
	}
}

func TestResourceFields(t *testing.T) {
	ev, err := Decode(signaltest.ReadTestdata(t, "node11_capture_message.json"), sentrysignal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := sentryresource.Resource{
		Release: "shop@1.4.2", Environment: "production", Platform: "node", ServerName: "build-7",
		SDK: sentry.ClientSDK{Name: "sentry.javascript.node", Version: "11.1.0"},
		OS:  sentry.OS{Name: "Linux", Version: "6.18.0"}, Runtime: sentry.Runtime{Name: "node", Version: "v20.19.2"},
		Device: sentry.Device{Architecture: "x64"},
	}
	if ev.Resource != want {
		t.Errorf("resource = %+v\nwant %+v", ev.Resource, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, payload, field string
		opts                 sentrysignal.Options
	}{
		{"not JSON", `{"level":`, "", sentrysignal.Options{}},
		{"not an object", `["error"]`, "", sentrysignal.Options{}},
		{"trailing data", `{} {}`, "", sentrysignal.Options{}},
		{"event id", `{"event_id":"xyz"}`, "event_id", sentrysignal.Options{}},
		{"timestamp", `{"timestamp":"yesterday"}`, "timestamp", sentrysignal.Options{}},
		{"negative timestamp", `{"timestamp":-5}`, "timestamp", sentrysignal.Options{}},
		{"trace id", `{"contexts":{"trace":{"trace_id":"00ff"}}}`, "contexts.trace.trace_id", sentrysignal.Options{}},
		{"span id", `{"contexts":{"trace":{"span_id":"zz23456789abcdef"}}}`, "contexts.trace.span_id", sentrysignal.Options{}},
		{"too large", `{"message":"0123456789"}`, "", sentrysignal.Options{MaxPayloadBytes: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := plog.NewLogRecordSlice()
			n, err := AppendLogs([]byte(tt.payload), tt.opts, dst)
			var de *sentrysignal.DecodeError
			if !errors.As(err, &de) || n != 0 || dst.Len() != 0 {
				t.Fatalf("AppendLogs = %d, %v (records %d), want a *DecodeError and nothing appended", n, err, dst.Len())
			}
			if de.Item != "event" || de.Field != tt.field {
				t.Errorf("error names item %q field %q, want event %q: %v", de.Item, de.Field, tt.field, err)
			}
		})
	}
}

// An event of odd member types is still mapped: only what would make the
// record wrong fails.
func TestOddMemberTypes(t *testing.T) {
	payload := `{"message":{"formatted":"shown","message":"shown %s","params":{"a":1}},"level":7,"tags":[["k","v"],["n",3]],"exception":[{"type":"E","value":"x"}],"contexts":"none","user":5}`
	lr := appendOne(t, []byte(payload), sentrysignal.Options{IncludeUserData: true})
	if lr.Body().Str() != "shown" || lr.SeverityNumber() != plog.SeverityNumberError {
		t.Errorf("body %q severity %v", lr.Body().Str(), lr.SeverityNumber())
	}
	assertAttrs(t, lr.Attributes(), map[string]any{
		"sentry.tags.k": "v", "sentry.tags.n": "3", "exception.type": "E",
		"sentry.message.template": "shown %s", "sentry.contexts": "none", "sentry.level": int64(7),
	})
}

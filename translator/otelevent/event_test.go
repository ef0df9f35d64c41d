package otelevent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const javaTrace = `java.lang.IllegalStateException: order 17 has no lines
	at com.shop.orders.OrderService.validate(OrderService.java:88)
	at com.shop.orders.OrderService.place(OrderService.java:41)
	at org.springframework.web.Dispatcher.dispatch(Dispatcher.java:1067)
Caused by: java.lang.NullPointerException: lines
	at com.shop.orders.Lines.count(Lines.java:12)
	... 3 more`

var (
	testTraceID = pcommon.TraceID{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	testSpanID  = pcommon.SpanID{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74}
	testTime    = time.Date(2026, 11, 28, 6, 0, 0, 123456000, time.UTC)
)

func testResource(r pcommon.Resource) {
	a := r.Attributes()
	a.PutStr("service.name", "orders")
	a.PutStr("service.version", "orders@1.4.2")
	a.PutStr("deployment.environment.name", "production")
	a.PutStr("host.name", "web-3")
	a.PutStr("telemetry.sdk.language", "java")
	a.PutStr("telemetry.sdk.name", "opentelemetry")
	a.PutStr("telemetry.sdk.version", "1.44.1")
}

// decoded is the part of an event the tests read.
type decoded struct {
	EventID     string  `json:"event_id"`
	Timestamp   float64 `json:"timestamp"`
	Platform    string  `json:"platform"`
	Level       string  `json:"level"`
	Logger      string  `json:"logger"`
	Transaction string  `json:"transaction"`
	LogEntry    *struct {
		Formatted string `json:"formatted"`
	} `json:"logentry"`
	Exception *struct {
		Values []struct {
			Type, Value string
			Stacktrace  *struct {
				Frames []struct {
					Function, Module, Filename string
					Lineno                     int
					InApp                      *bool `json:"in_app"`
				}
			}
		}
	}
	Contexts struct {
		Trace struct {
			TraceID      string `json:"trace_id"`
			SpanID       string `json:"span_id"`
			ParentSpanID string `json:"parent_span_id"`
		}
	}
	Release     string
	Environment string
	ServerName  string `json:"server_name"`
	SDK         struct{ Name, Version string }
	Tags        map[string]string
	Extra       map[string]any
}

func decode(t *testing.T, ev Event) decoded {
	t.Helper()
	var d decoded
	if err := json.Unmarshal(ev.Payload, &d); err != nil {
		t.Fatalf("event is not JSON: %v\n%s", err, ev.Payload)
	}
	return d
}

func logsWith(fill func(plog.LogRecord)) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	testResource(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.shop.orders")
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(testTime))
	fill(lr)
	return ld
}

func collectLogs(t *testing.T, ld plog.Logs, opts EventOptions) ([]decoded, []Drop) {
	t.Helper()
	var out []decoded
	drops := FromLogs(ld, opts, func(ev Event) { out = append(out, decode(t, ev)) })
	return out, drops
}

func TestFromLogs(t *testing.T) {
	withException := func(lr plog.LogRecord) {
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.Body().SetStr("placing order failed")
		lr.SetTraceID(testTraceID)
		lr.SetSpanID(testSpanID)
		lr.Attributes().PutStr("exception.type", "java.lang.IllegalStateException")
		lr.Attributes().PutStr("exception.message", "order 17 has no lines")
		lr.Attributes().PutStr("exception.stacktrace", javaTrace)
		lr.Attributes().PutStr("order.id", "17")
		lr.Attributes().PutStr("tenant", "acme")
	}
	tests := []struct {
		name  string
		fill  func(plog.LogRecord)
		opts  EventOptions
		check func(t *testing.T, evs []decoded)
	}{
		{
			name: "exception with a Java trace",
			fill: withException,
			opts: EventOptions{InAppPrefixes: []string{"com.shop."}, TagAttributes: []string{"tenant", "service.name"}},
			check: func(t *testing.T, evs []decoded) {
				if len(evs) != 1 {
					t.Fatalf("got %d events, want 1", len(evs))
				}
				e := evs[0]
				want := map[string][2]string{
					"level": {e.Level, "error"}, "platform": {e.Platform, "java"}, "release": {e.Release, "orders@1.4.2"},
					"environment": {e.Environment, "production"}, "server_name": {e.ServerName, "web-3"},
					"sdk.name": {e.SDK.Name, "opentelemetry"}, "sdk.version": {e.SDK.Version, "1.44.1"},
					"trace_id": {e.Contexts.Trace.TraceID, testTraceID.String()}, "span_id": {e.Contexts.Trace.SpanID, testSpanID.String()},
					"logger": {e.Logger, "com.shop.orders"}, "logentry": {e.LogEntry.Formatted, "placing order failed"},
					"tags.tenant": {e.Tags["tenant"], "acme"}, "tags.service.name": {e.Tags["service.name"], "orders"},
				}
				for k, v := range want {
					if v[0] != v[1] {
						t.Errorf("%s = %q, want %q", k, v[0], v[1])
					}
				}
				if got := e.Extra["order.id"]; got != "17" {
					t.Errorf("extra[order.id] = %v, want 17", got)
				}
				if _, ok := e.Extra["exception.stacktrace"]; ok {
					t.Error("the stack trace is repeated in extra")
				}
				if e.Timestamp != float64(testTime.UnixMicro())/1e6 {
					t.Errorf("timestamp = %v", e.Timestamp)
				}
				vals := e.Exception.Values
				// The parser may split "java.lang.X" into module and type.
				if len(vals) != 2 || !strings.HasSuffix(vals[0].Type, "NullPointerException") ||
					!strings.HasSuffix(vals[1].Type, "IllegalStateException") || vals[1].Value != "order 17 has no lines" {
					t.Fatalf("exception.values = %+v, want the cause first and the raised exception last", vals)
				}
				frames := vals[1].Stacktrace.Frames
				last := frames[len(frames)-1]
				if last.Function != "validate" || last.Lineno != 88 || last.InApp == nil || !*last.InApp {
					t.Errorf("innermost frame = %+v, want validate:88 in_app", last)
				}
				if first := frames[0]; first.InApp == nil || *first.InApp {
					t.Errorf("framework frame %+v not marked in_app=false", first)
				}
			},
		},
		{
			name: "severity maps to level",
			fill: func(lr plog.LogRecord) { withException(lr); lr.SetSeverityNumber(plog.SeverityNumberFatal2) },
			check: func(t *testing.T, evs []decoded) {
				if evs[0].Level != "fatal" {
					t.Errorf("level = %q, want fatal", evs[0].Level)
				}
			},
		},
		{
			name: "exception without a stack trace",
			fill: func(lr plog.LogRecord) {
				lr.Attributes().PutStr("exception.type", "TimeoutError")
				lr.Attributes().PutStr("exception.message", "upstream took 30s")
			},
			check: func(t *testing.T, evs []decoded) {
				v := evs[0].Exception.Values
				if len(v) != 1 || v[0].Type != "TimeoutError" || v[0].Value != "upstream took 30s" || v[0].Stacktrace != nil {
					t.Errorf("values = %+v", v)
				}
				if evs[0].Level != "error" {
					t.Errorf("unset severity: level %q, want error", evs[0].Level)
				}
			},
		},
		{
			name:  "no exception: not sent",
			fill:  func(lr plog.LogRecord) { lr.SetSeverityNumber(plog.SeverityNumberError); lr.Body().SetStr("disk full") },
			check: func(t *testing.T, evs []decoded) { expectCount(t, evs, 0) },
		},
		{
			name: "no exception, at the configured severity: a message event",
			fill: func(lr plog.LogRecord) {
				lr.SetSeverityNumber(plog.SeverityNumberWarn)
				lr.Body().SetStr("disk 95% full")
			},
			opts: EventOptions{LogMessageMinSeverity: plog.SeverityNumberWarn},
			check: func(t *testing.T, evs []decoded) {
				expectCount(t, evs, 1)
				if evs[0].Level != "warning" || evs[0].LogEntry.Formatted != "disk 95% full" || evs[0].Exception != nil {
					t.Errorf("event = %+v", evs[0])
				}
			},
		},
		{
			name:  "no exception, under the configured severity",
			fill:  func(lr plog.LogRecord) { lr.SetSeverityNumber(plog.SeverityNumberInfo); lr.Body().SetStr("ok") },
			opts:  EventOptions{LogMessageMinSeverity: plog.SeverityNumberWarn},
			check: func(t *testing.T, evs []decoded) { expectCount(t, evs, 0) },
		},
		{
			name: "the receiver's event id is kept",
			fill: func(lr plog.LogRecord) {
				withException(lr)
				lr.Attributes().PutStr("log.record.uid", "0123456789abcdef0123456789abcdef")
			},
			check: func(t *testing.T, evs []decoded) {
				if evs[0].EventID != "0123456789abcdef0123456789abcdef" {
					t.Errorf("event_id = %q", evs[0].EventID)
				}
			},
		},
		{
			name: "long tag values cut to Relay's 200",
			fill: func(lr plog.LogRecord) {
				withException(lr)
				lr.Attributes().PutStr("tenant", strings.Repeat("é", 300))
			},
			opts: EventOptions{TagAttributes: []string{"tenant"}},
			check: func(t *testing.T, evs []decoded) {
				if n := len([]rune(evs[0].Tags["tenant"])); n != MaxTagChars {
					t.Errorf("tag has %d characters, want %d", n, MaxTagChars)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, drops := collectLogs(t, logsWith(tt.fill), tt.opts)
			if len(drops) != 0 {
				t.Fatalf("drops: %+v", drops)
			}
			tt.check(t, evs)
		})
	}
}

func expectCount(t *testing.T, evs []decoded, n int) {
	t.Helper()
	if len(evs) != n {
		t.Fatalf("got %d events, want %d", len(evs), n)
	}
}

func TestFromLogsOversizedEvent(t *testing.T) {
	// An attribute set far past max_event_size: extra is shed, the event
	// still goes.
	ld := logsWith(func(lr plog.LogRecord) {
		lr.Attributes().PutStr("exception.type", "E")
		for i := 0; i < MaxExtraEntries; i++ {
			lr.Attributes().PutStr(strings.Repeat("k", 10)+string(rune('a'+i%26))+strings.Repeat("x", i), strings.Repeat("v", MaxExtraValueChars))
		}
	})
	evs, drops := collectLogs(t, ld, EventOptions{})
	if len(drops) != 0 || len(evs) != 1 {
		t.Fatalf("events %d drops %+v, want 1 event", len(evs), drops)
	}
	if _, ok := evs[0].Extra["sentry.bridge.extra_dropped"]; !ok {
		t.Errorf("extra not shed: %d entries", len(evs[0].Extra))
	}
}

func TestFromTraces(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	testResource(rs.Resource())
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "nodejs")
	spans := rs.ScopeSpans().AppendEmpty().Spans()

	failed := spans.AppendEmpty()
	failed.SetName("POST /orders")
	failed.SetTraceID(testTraceID)
	failed.SetSpanID(testSpanID)
	failed.SetParentSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	failed.Status().SetCode(ptrace.StatusCodeError)
	failed.Attributes().PutStr("http.route", "/orders")
	for _, typ := range []string{"TypeError", "RangeError"} {
		ev := failed.Events().AppendEmpty()
		ev.SetName("exception")
		ev.SetTimestamp(pcommon.NewTimestampFromTime(testTime))
		ev.Attributes().PutStr("exception.type", typ)
		ev.Attributes().PutStr("exception.message", "bad "+typ)
	}
	other := failed.Events().AppendEmpty()
	other.SetName("retry")

	quiet := spans.AppendEmpty()
	quiet.SetName("GET /health")
	quiet.Status().SetCode(ptrace.StatusCodeError)
	quiet.Status().SetMessage("connection refused")
	quiet.SetTraceID(testTraceID)
	quiet.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})

	tests := []struct {
		name       string
		opts       EventOptions
		wantEvents int
	}{
		{"exception events only", EventOptions{}, 2},
		{"and failed spans without one", EventOptions{ErrorSpans: true}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs []decoded
			FromTraces(td, tt.opts, func(ev Event) { evs = append(evs, decode(t, ev)) })
			expectCount(t, evs, tt.wantEvents)
			e := evs[0]
			if e.Platform != "node" || e.Transaction != "POST /orders" || e.Contexts.Trace.SpanID != testSpanID.String() ||
				e.Contexts.Trace.ParentSpanID != "0102030405060708" || e.Extra["http.route"] != "/orders" {
				t.Errorf("first event = %+v", e)
			}
			if evs[1].Exception.Values[0].Type != "RangeError" {
				t.Errorf("second event type %q", evs[1].Exception.Values[0].Type)
			}
			if tt.opts.ErrorSpans && evs[2].LogEntry.Formatted != "connection refused" {
				t.Errorf("failed span message %+v", evs[2].LogEntry)
			}
		})
	}
}

func TestPlatformOf(t *testing.T) {
	for lang, want := range map[string]string{
		"java": "java", "nodejs": "node", "webjs": "javascript", "dotnet": "csharp", "go": "go",
		"python": "python", "ruby": "ruby", "cpp": "native", "rust": "native", "swift": "cocoa", "": "other", "cobol": "other",
	} {
		if got := PlatformOf(lang); got != want {
			t.Errorf("PlatformOf(%q) = %q, want %q", lang, got, want)
		}
	}
}

func TestFromLogsUnparsedStackKept(t *testing.T) {
	const text = "this is not a stack trace any parser reads"
	evs, _ := collectLogs(t, logsWith(func(lr plog.LogRecord) {
		lr.Attributes().PutStr("exception.type", "Weird")
		lr.Attributes().PutStr("exception.stacktrace", text)
	}), EventOptions{})
	expectCount(t, evs, 1)
	if evs[0].Extra["exception.stacktrace"] != text {
		t.Errorf("extra = %v, want the unparsed text kept", evs[0].Extra)
	}
	if evs[0].Exception.Values[0].Stacktrace != nil {
		t.Error("frames invented for an unparsed trace")
	}
}

// TestEventIDsStable: translating the same request twice (a retry) gives
// the same event ids, so Sentry keeps a resent event once; different
// exceptions get different ids.
func TestEventIDsStable(t *testing.T) {
	ld := logsWith(func(lr plog.LogRecord) {
		lr.Attributes().PutStr("exception.type", "E")
	})
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).CopyTo(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty())
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(testTraceID)
	span.SetSpanID(testSpanID)
	for i := 0; i < 2; i++ {
		ev := span.Events().AppendEmpty()
		ev.SetName("exception")
		ev.Attributes().PutStr("exception.type", "E")
	}
	ids := func() []string {
		var out []string
		FromLogs(ld, EventOptions{}, func(ev Event) { out = append(out, ev.EventID) })
		FromTraces(td, EventOptions{}, func(ev Event) { out = append(out, ev.EventID) })
		return out
	}
	first, second := ids(), ids()
	if len(first) != 4 {
		t.Fatalf("got %d events, want 4", len(first))
	}
	seen := map[string]bool{}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("event %d: id %s, then %s on the retry", i, first[i], second[i])
		}
		if !isHex32(first[i]) || seen[first[i]] {
			t.Errorf("event %d: id %q not a fresh 32-hex id", i, first[i])
		}
		seen[first[i]] = true
	}
}

func TestFromLogsEscapedIsUnhandled(t *testing.T) {
	tests := []struct {
		name        string
		escaped     *bool
		wantHandled string // "" when no mechanism
	}{
		{"escaped", ptr(true), "false"},
		{"caught", ptr(false), "true"},
		{"not said", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var payload []byte
			FromLogs(logsWith(func(lr plog.LogRecord) {
				lr.Attributes().PutStr("exception.type", "E")
				if tt.escaped != nil {
					lr.Attributes().PutBool("exception.escaped", *tt.escaped)
				}
			}), EventOptions{}, func(ev Event) { payload = ev.Payload })
			var ev struct {
				Exception struct {
					Values []struct {
						Mechanism *struct {
							Type    string
							Handled *bool
						}
					}
				}
			}
			if err := json.Unmarshal(payload, &ev); err != nil {
				t.Fatal(err)
			}
			m := ev.Exception.Values[0].Mechanism
			got := ""
			if m != nil {
				got = fmt.Sprint(*m.Handled)
			}
			if got != tt.wantHandled {
				t.Errorf("mechanism.handled = %q, want %q", got, tt.wantHandled)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestFromLogsSyntheticExceptionIsAMessage: our receiver keeps the
// synthetic exception of a JavaScript captureMessage in sentry.exception,
// without exception.type: a message, not sent unless messages are.
func TestFromLogsSyntheticExceptionIsAMessage(t *testing.T) {
	fill := func(lr plog.LogRecord) {
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.Body().SetStr("hello")
		v := lr.Attributes().PutEmptyMap("sentry.exception").PutEmptySlice("values").AppendEmpty().SetEmptyMap()
		v.PutStr("value", "hello")
		v.PutEmptyMap("mechanism").PutBool("synthetic", true)
	}
	evs, _ := collectLogs(t, logsWith(fill), EventOptions{})
	expectCount(t, evs, 0)
	evs, _ = collectLogs(t, logsWith(fill), EventOptions{LogMessageMinSeverity: plog.SeverityNumberInfo})
	expectCount(t, evs, 1)
	if evs[0].Exception != nil || evs[0].LogEntry == nil || evs[0].LogEntry.Formatted != "hello" {
		t.Errorf("event = %+v, want a message without exception", evs[0])
	}
}

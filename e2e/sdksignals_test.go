package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// signalClients are the clients TestSDKSignals runs with E2E_EVENTS=1 and
// the kinds of items each must send: every kind its SDK release has an API
// for (see each program's comment for what it lacks).
var signalClients = []struct {
	name  string
	kinds []string
}{
	{"node11-static", []string{"exception", "message", "log", "trace_metric", "check_in", "feedback", "session"}},
	{"node10-v1", []string{"exception", "message", "log", "trace_metric", "check_in", "feedback", "session"}},
	{"browser11-v2", []string{"exception", "message", "log", "trace_metric", "feedback", "session"}},
	{"go-v1", []string{"exception", "message", "check_in"}},
	{"python1-wsgi", []string{"store", "exception", "message", "check_in", "user_report", "session", "sessions"}},
}

// TestSDKSignals (E2E=1) runs each client of signalClients with
// E2E_EVENTS=1 against a collector with all four pipelines: every event,
// log entry, check-in and feedback the SDK's own recorded requests carried
// (read here with encoding/json) comes out of the logs pipeline once with
// its fields, and every metric point and session out of the metrics
// pipeline.
func TestSDKSignals(t *testing.T) {
	requireE2E(t)
	for _, c := range signalClients {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			client, ok := sdkClientByName(c.name)
			require.True(t, ok)
			dir := t.TempDir()
			logsOut, metricsOut := dir+"/logs.jsonl", dir+"/metrics.jsonl"
			run := runSDK(t, client, sdkRunOptions{
				Env:    []string{"E2E_EVENTS=1"},
				Config: func(a collectorAddrs) string { return withSignalPipelines(sdkCollectorConfig(a), logsOut, metricsOut) },
			})
			sent := readSDKSignals(t, run.Posts())
			t.Logf("%s sent %s", c.name, sent.summary())
			for _, kind := range c.kinds {
				require.Positive(t, sent.kinds()[kind], "%s sent no %s: items %v", c.name, kind, sent.itemTypes)
			}
			tally := &signalTally{}
			checkSignalLogs(t, sent, logsOut, run.Env, tally)
			checkSignalMetrics(t, sent, metricsOut, run.Env, tally)
			t.Logf("%s (%s), sent/arrived: %s", c.name, client.SDK, tally)
		})
	}
}

// withSignalPipelines adds logs and metrics pipelines with their file
// exporters to a configuration of sdkCollectorConfig's shape.
func withSignalPipelines(config, logsOut, metricsOut string) string {
	exporters := fmt.Sprintf("  file/logs:\n    path: %q\n    format: json\n    flush_interval: 100ms\n"+
		"  file/metrics:\n    path: %q\n    format: json\n    flush_interval: 100ms\n", logsOut, metricsOut)
	config = strings.Replace(config, "service:\n", exporters+"service:\n", 1)
	return config + "    logs:\n      receivers: [sentryprofile]\n      exporters: [file/logs]\n" +
		"    metrics:\n      receivers: [sentryprofile]\n      exporters: [file/metrics]\n"
}

// sdkSignals is what an SDK's requests carried besides profiles and spans.
type sdkSignals struct {
	itemTypes map[string]int
	stored    int // events posted to /store/ (also in events)
	events    []sentEvent
	feedback  []sentFeedback // feedback and user_report items
	logs      []sentLog
	metrics   map[string]int     // points per metric name
	values    map[string]float64 // the sum of their values
	checkIns  []sentCheckIn
	// sessions and aggregates are the session and sessions items;
	// started and ended are what sentrysession makes of them.
	sessions, aggregates int
	started, ended       int64
}

type sentEvent struct {
	id, message string
	chain       []sentException // oldest first, as sent
}

type sentException struct{ typ, value string }

// kind names the event in the tally.
func (e sentEvent) kind() string {
	if e.message != "" {
		return "message"
	}
	return "exception"
}

// signalTally counts, per kind of record, how many were sent and how many
// arrived, in the order the kinds were first counted.
type signalTally struct {
	order  []string
	counts map[string][2]int
}

func (s *signalTally) add(kind string, sent, arrived int) {
	if s.counts == nil {
		s.counts = map[string][2]int{}
	}
	if _, ok := s.counts[kind]; !ok {
		s.order = append(s.order, kind)
	}
	c := s.counts[kind]
	s.counts[kind] = [2]int{c[0] + sent, c[1] + arrived}
}

func (s *signalTally) String() string {
	parts := make([]string, 0, len(s.order))
	for _, k := range s.order {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, s.counts[k][0], s.counts[k][1]))
	}
	return strings.Join(parts, ", ")
}

type sentFeedback struct {
	userReport bool
	id, text   string // the feedback's own event_id (the report's event's), its text
}

type sentLog struct{ body, level string }

type sentCheckIn struct {
	id, slug, status string
	duration         float64 // seconds; 0 when not sent
}

// kinds counts the sent records by what TestSDKSignals requires of a client.
func (s sdkSignals) kinds() map[string]int {
	k := map[string]int{
		"store": s.stored, "log": len(s.logs), "trace_metric": len(s.metrics), "check_in": len(s.checkIns),
		"session": s.sessions, "sessions": s.aggregates,
	}
	for _, e := range s.events {
		if len(e.chain) > 1 {
			k["exception"]++ // an exception with its cause
		}
		if e.message != "" {
			k["message"]++
		}
	}
	for _, f := range s.feedback {
		if f.userReport {
			k["user_report"]++
		} else {
			k["feedback"]++
		}
	}
	return k
}

func (s sdkSignals) summary() string {
	return fmt.Sprintf("%d events (%d to /store/), %d feedback, %d log entries, metrics %v, %d check-ins, %d session updates, %d aggregates (items %v)",
		len(s.events), s.stored, len(s.feedback), len(s.logs), s.metrics, len(s.checkIns), s.sessions, s.aggregates, s.itemTypes)
}

// records is how many log records the logs pipeline must write.
func (s sdkSignals) records() int {
	return len(s.events) + len(s.feedback) + len(s.logs) + len(s.checkIns)
}

// readSDKSignals reads the envelopes, and the /store/ bodies of SDKs that
// post errors there, with encoding/json.
func readSDKSignals(t *testing.T, posts []recordedRequest) sdkSignals {
	t.Helper()
	s := sdkSignals{itemTypes: map[string]int{}, metrics: map[string]int{}, values: map[string]float64{}}
	for _, p := range posts {
		if strings.Contains(p.Path, "/store") {
			s.stored++
			s.itemTypes["store"]++
			s.events = append(s.events, readSentEvent(t, p.Body))
			continue
		}
		items, err := parseEnvelope(p.Body)
		require.NoError(t, err)
		for _, it := range items {
			s.itemTypes[it.Type]++
			s.addItem(t, it)
		}
	}
	return s
}

func (s *sdkSignals) addItem(t *testing.T, it envelopeItem) {
	t.Helper()
	var doc struct {
		EventID  string `json:"event_id"`
		Comments string `json:"comments"`
		Contexts struct {
			Feedback struct {
				Message string `json:"message"`
			} `json:"feedback"`
		} `json:"contexts"`
		Items []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
			Body  string  `json:"body"`
			Level string  `json:"level"`
		} `json:"items"`
		CheckInID  string  `json:"check_in_id"`
		MonitorSlg string  `json:"monitor_slug"`
		Status     string  `json:"status"`
		Duration   float64 `json:"duration"`
		Init       bool    `json:"init"`
		Aggregates []map[string]any
	}
	switch it.Type {
	case "event", "feedback", "user_report", "log", "trace_metric", "check_in", "session", "sessions":
		require.NoError(t, json.Unmarshal(it.Payload, &doc), it.Type)
	}
	switch it.Type {
	case "event":
		s.events = append(s.events, readSentEvent(t, it.Payload))
	case "feedback":
		s.feedback = append(s.feedback, sentFeedback{id: doc.EventID, text: doc.Contexts.Feedback.Message})
	case "user_report":
		s.feedback = append(s.feedback, sentFeedback{userReport: true, id: doc.EventID, text: doc.Comments})
	case "log":
		for _, e := range doc.Items {
			s.logs = append(s.logs, sentLog{body: e.Body, level: e.Level})
		}
	case "trace_metric":
		for _, m := range doc.Items {
			s.metrics[m.Name]++
			s.values[m.Name] += m.Value
		}
	case "check_in":
		s.checkIns = append(s.checkIns, sentCheckIn{id: doc.CheckInID, slug: doc.MonitorSlg, status: doc.Status, duration: doc.Duration})
	case "session":
		s.sessions++
		if doc.Init {
			s.started++
		}
		if doc.Status != "ok" && doc.Status != "" {
			s.ended++
		}
	case "sessions":
		s.aggregates++
		for _, bucket := range doc.Aggregates {
			for _, k := range []string{"exited", "errored", "unhandled", "crashed", "abnormal"} {
				n, _ := bucket[k].(float64)
				s.started += int64(n)
				s.ended += int64(n)
			}
		}
	}
}

// readSentEvent reads an event's id, message and exception chain.
func readSentEvent(t *testing.T, payload []byte) sentEvent {
	t.Helper()
	var doc struct {
		EventID  string          `json:"event_id"`
		Message  json.RawMessage `json:"message"`
		LogEntry *struct {
			Message   string `json:"message"`
			Formatted string `json:"formatted"`
		} `json:"logentry"`
		Exception json.RawMessage `json:"exception"`
	}
	require.NoError(t, json.Unmarshal(payload, &doc), "event")
	// {"values": [...]}, or the bare list sentry-go sends
	type entry struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}
	var values []entry
	if len(doc.Exception) > 0 && doc.Exception[0] == '[' {
		require.NoError(t, json.Unmarshal(doc.Exception, &values), "event exception")
	} else if len(doc.Exception) > 0 {
		var wrapped struct {
			Values []entry `json:"values"`
		}
		require.NoError(t, json.Unmarshal(doc.Exception, &wrapped), "event exception")
		values = wrapped.Values
	}
	ev := sentEvent{id: doc.EventID}
	var text string
	if json.Unmarshal(doc.Message, &text) == nil {
		ev.message = text
	}
	if doc.LogEntry != nil && ev.message == "" {
		ev.message = doc.LogEntry.Formatted
		if ev.message == "" {
			ev.message = doc.LogEntry.Message
		}
	}
	if ev.message == "" {
		for _, v := range values {
			ev.chain = append(ev.chain, sentException{typ: v.Type, value: v.Value})
		}
	}
	return ev
}

// checkSignalLogs waits for the logs file to hold every record sent and
// checks each one's fields.
func checkSignalLogs(t *testing.T, sent sdkSignals, path string, env sdkEnv, tally *signalTally) {
	t.Helper()
	want := sent.records()
	var records []plog.LogRecord
	require.Eventually(t, func() bool {
		logs, err := readLogLines(path)
		require.NoError(t, err)
		records = allRecords(logs)
		return len(records) >= want
	}, 30*time.Second, 200*time.Millisecond, "the logs file never held the %d records sent", want)
	time.Sleep(300 * time.Millisecond) // a duplicate would follow within a flush
	logs, err := readLogLines(path)
	require.NoError(t, err)
	records = allRecords(logs)
	assert.Len(t, records, want, "every record once")
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			assertRunResource(t, rl.Resource().Attributes(), env)
		}
	}

	byAttr := func(key, value string) []plog.LogRecord {
		var out []plog.LogRecord
		for _, lr := range records {
			if v, ok := lr.Attributes().Get(key); ok && v.AsString() == value {
				out = append(out, lr)
			}
		}
		return out
	}
	byBody := func(body string) []plog.LogRecord {
		var out []plog.LogRecord
		for _, lr := range records {
			if lr.Body().AsString() == body {
				out = append(out, lr)
			}
		}
		return out
	}
	uid := string(semconv.LogRecordUIDKey)
	for _, ev := range sent.events {
		got := byAttr(uid, ev.id)
		tally.add(ev.kind(), 1, len(got))
		if !assert.Len(t, got, 1, "event %s (%q %v) once", ev.id, ev.message, ev.chain) {
			continue
		}
		checkEventRecord(t, ev, got[0])
	}
	for _, f := range sent.feedback {
		kind := "feedback"
		if f.userReport {
			kind = "user_report"
		}
		tally.add(kind, 1, len(byBody(f.text)))
		assert.Len(t, byBody(f.text), 1, "feedback %q once", f.text)
		if f.userReport {
			assert.Len(t, byAttr("sentry.feedback.associated_event_id", f.id), 1, "user_report of %s", f.id)
		} else {
			assert.Len(t, byAttr(uid, f.id), 1, "feedback %s", f.id)
		}
	}
	for _, l := range sent.logs {
		got := byBody(l.body)
		tally.add("log", 1, len(got))
		if assert.Len(t, got, 1, "log entry %q once", l.body) {
			assert.Equal(t, l.level, got[0].SeverityText(), "log entry %q severity", l.body)
		}
	}
	for _, c := range sent.checkIns {
		got := byAttr("sentry.check_in.id", c.id)
		tally.add("check_in", 1, len(got))
		if assert.Len(t, got, 1, "check-in %s once", c.id) {
			assertAttr(t, got[0].Attributes(), "sentry.monitor.slug", c.slug)
			assertAttr(t, got[0].Attributes(), "sentry.check_in.status", c.status)
			if c.duration != 0 {
				d, ok := got[0].Attributes().Get("sentry.check_in.duration")
				assert.True(t, ok, "check-in %s: sentry.check_in.duration", c.id)
				assert.InDelta(t, c.duration, d.Double(), 1e-9, "check-in %s: sentry.check_in.duration", c.id)
			}
		}
	}
}

// checkEventRecord: a message's text is the body; an exception's last
// entry is exception.type and exception.message, and the stack trace
// text names every entry of the chain.
func checkEventRecord(t *testing.T, ev sentEvent, lr plog.LogRecord) {
	t.Helper()
	if ev.message != "" {
		assert.Equal(t, ev.message, lr.Body().AsString(), "event %s body", ev.id)
	}
	if len(ev.chain) == 0 {
		return
	}
	attrs := lr.Attributes()
	raised := ev.chain[len(ev.chain)-1]
	assertAttr(t, attrs, string(semconv.ExceptionTypeKey), raised.typ)
	assertAttr(t, attrs, string(semconv.ExceptionMessageKey), raised.value)
	trace, ok := attrs.Get(string(semconv.ExceptionStacktraceKey))
	require.True(t, ok, "event %s: no %s", ev.id, semconv.ExceptionStacktraceKey)
	for _, e := range ev.chain {
		assert.Contains(t, trace.Str(), e.value, "event %s: the stack trace names each exception of the chain", ev.id)
	}
	// sentry.exception keeps the entries as sent: {"values": [...]}, or
	// sentry-go's bare list
	if exc, ok := attrs.Get("sentry.exception"); assert.True(t, ok, "event %s: sentry.exception", ev.id) {
		entries := exc
		if exc.Type() == pcommon.ValueTypeMap {
			entries, _ = exc.Map().Get("values")
		}
		if assert.Equal(t, pcommon.ValueTypeSlice, entries.Type(), "event %s: sentry.exception entries", ev.id) {
			assert.Equal(t, len(ev.chain), entries.Slice().Len(), "event %s: sentry.exception entries", ev.id)
		}
	}
}

// assertRunResource: the SDK's release and environment, which every item
// of these clients names, are the resource's.
func assertRunResource(t *testing.T, attrs pcommon.Map, env sdkEnv) {
	t.Helper()
	assertAttr(t, attrs, string(semconv.ServiceVersionKey), env.Release)
	assertAttr(t, attrs, string(semconv.DeploymentEnvironmentNameKey), env.Environment)
}

func assertAttr(t *testing.T, attrs pcommon.Map, key, want string) {
	t.Helper()
	v, ok := attrs.Get(key)
	if assert.True(t, ok, "attribute %s missing (want %q)", key, want) {
		assert.Equal(t, want, v.AsString(), "attribute %s", key)
	}
}

func allRecords(logs []plog.Logs) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, lr)
				}
			}
		}
	}
	return out
}

// checkSignalMetrics waits for the metrics file to hold a point per metric
// entry sent and the sessions' counts.
func checkSignalMetrics(t *testing.T, sent sdkSignals, path string, env sdkEnv, tally *signalTally) {
	t.Helper()
	if len(sent.metrics) == 0 && sent.sessions+sent.aggregates == 0 {
		return
	}
	var points map[string]int
	var sums map[string]int64
	var values map[string]float64
	var metrics []pmetric.Metrics
	done := func() bool {
		var err error
		metrics, err = readMetricLines(path)
		require.NoError(t, err)
		points, sums, values = metricPoints(metrics), metricSums(metrics), metricValues(metrics)
		for name, n := range sent.metrics {
			if points[name] < n {
				return false
			}
		}
		return sums["sentry.sessions.started"] >= sent.started && sums["sentry.sessions.ended"] >= sent.ended
	}
	assert.Eventually(t, done, 30*time.Second, 200*time.Millisecond, "the metrics file never held %v and the sessions", sent.metrics)
	time.Sleep(300 * time.Millisecond)
	done()
	for _, md := range metrics {
		for _, rm := range md.ResourceMetrics().All() {
			assertRunResource(t, rm.Resource().Attributes(), env)
		}
	}
	for name, n := range sent.metrics {
		tally.add("metric "+name, n, points[name])
		assert.Equal(t, n, points[name], "points of %s", name)
		assert.InDelta(t, sent.values[name], values[name], 1e-9, "the values of %s", name)
	}
	if sent.sessions+sent.aggregates > 0 {
		tally.add("sessions started", int(sent.started), int(sums["sentry.sessions.started"]))
		tally.add("sessions ended", int(sent.ended), int(sums["sentry.sessions.ended"]))
	}
	assert.Equal(t, sent.started, sums["sentry.sessions.started"], "sentry.sessions.started")
	assert.Equal(t, sent.ended, sums["sentry.sessions.ended"], "sentry.sessions.ended")
}

// metricSums adds up the integer sum points of each metric name.
func metricSums(metrics []pmetric.Metrics) map[string]int64 {
	out := map[string]int64{}
	for _, md := range metrics {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Type() != pmetric.MetricTypeSum {
						continue
					}
					for _, dp := range m.Sum().DataPoints().All() {
						out[m.Name()] += dp.IntValue()
					}
				}
			}
		}
	}
	return out
}

// metricValues adds up the values of each metric name's points: a sum's
// or gauge's value, a histogram's sum.
func metricValues(metrics []pmetric.Metrics) map[string]float64 {
	value := func(dp pmetric.NumberDataPoint) float64 {
		if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
			return float64(dp.IntValue())
		}
		return dp.DoubleValue()
	}
	out := map[string]float64{}
	for _, md := range metrics {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					switch m.Type() {
					case pmetric.MetricTypeSum:
						for _, dp := range m.Sum().DataPoints().All() {
							out[m.Name()] += value(dp)
						}
					case pmetric.MetricTypeGauge:
						for _, dp := range m.Gauge().DataPoints().All() {
							out[m.Name()] += value(dp)
						}
					case pmetric.MetricTypeExponentialHistogram:
						for _, dp := range m.ExponentialHistogram().DataPoints().All() {
							out[m.Name()] += dp.Sum()
						}
					}
				}
			}
		}
	}
	return out
}

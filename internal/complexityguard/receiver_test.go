package complexityguard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// receiverUnderGuard is a sentryprofile receiver built by its factory in
// all four pipelines, as the README's configuration runs it, each into a
// sink, listening on loopback.
type receiverUnderGuard struct {
	url      string
	profiles *consumertest.ProfilesSink
	traces   *consumertest.TracesSink
	logs     *consumertest.LogsSink
	metrics  *consumertest.MetricsSink
}

func startReceiver(tb testing.TB) *receiverUnderGuard {
	tb.Helper()
	f := sentryprofilereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	cfg.ServerConfig.NetAddr.Endpoint = testnet.FreeLoopbackAddr(tb)
	// A chunk goes down the pipeline when its request is answered, not
	// after waiting for its spans: the run must include its translation.
	cfg.Links.Enabled = false
	require.NoError(tb, cfg.Validate())
	set := receivertest.NewNopSettings(f.Type())
	set.ID = component.NewID(f.Type())
	set.Logger = zap.NewNop()
	r := &receiverUnderGuard{
		url:      "http://" + cfg.ServerConfig.NetAddr.Endpoint,
		profiles: new(consumertest.ProfilesSink), traces: new(consumertest.TracesSink),
		logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink),
	}
	ctx := context.Background()
	var handles []component.Component
	add := func(c component.Component, err error) {
		require.NoError(tb, err)
		handles = append(handles, c)
	}
	add(f.CreateProfiles(ctx, set, cfg, r.profiles))
	add(f.CreateTraces(ctx, set, cfg, r.traces))
	add(f.CreateLogs(ctx, set, cfg, r.logs))
	add(f.CreateMetrics(ctx, set, cfg, r.metrics))
	for _, h := range handles {
		require.NoError(tb, h.Start(ctx, componenttest.NewNopHost()))
		tb.Cleanup(func() { require.NoError(tb, h.Shutdown(context.Background())) })
	}
	return r
}

// reset empties the sinks between runs.
func (r *receiverUnderGuard) reset() {
	r.profiles.Reset()
	r.traces.Reset()
	r.logs.Reset()
	r.metrics.Reset()
}

// outputBytes is the OTLP protobuf size of everything the sinks hold, and
// the records in it (log records, data points, spans, profile samples).
func (r *receiverUnderGuard) outputBytes() (size, records int64) {
	for _, ld := range r.logs.AllLogs() {
		size += int64((&plog.ProtoMarshaler{}).LogsSize(ld))
		records += int64(ld.LogRecordCount())
	}
	for _, md := range r.metrics.AllMetrics() {
		size += int64((&pmetric.ProtoMarshaler{}).MetricsSize(md))
		records += int64(md.DataPointCount())
	}
	for _, td := range r.traces.AllTraces() {
		size += int64((&ptrace.ProtoMarshaler{}).TracesSize(td))
		records += int64(td.SpanCount())
	}
	for _, pd := range r.profiles.AllProfiles() {
		size += int64((&pprofile.ProtoMarshaler{}).ProfilesSize(pd))
		records += int64(pd.SampleCount())
	}
	return size, records
}

// httpRow is a row that posts one request to the receiver: path is
// "envelope" or "store", body builds the request body of size n.
func httpRow(path string, body func(n int) []byte) func(testing.TB, int) sized {
	return func(tb testing.TB, n int) sized {
		r := startReceiver(tb)
		data := body(n)
		url := r.url + "/api/42/" + path + "/?sentry_key=k&sentry_version=7"
		client := &http.Client{Timeout: time.Minute}
		return sized{
			run: func() {
				r.reset()
				resp, err := client.Post(url, "application/x-sentry-envelope", bytes.NewReader(data))
				if err != nil {
					tb.Errorf("POST /%s/: %v", path, err)
					return
				}
				answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					tb.Errorf("POST /%s/ with %d bytes: %d %s", path, len(data), resp.StatusCode, answer)
				}
			},
			observe: func() outcome {
				size, records := r.outputBytes()
				if records == 0 {
					tb.Errorf("POST /%s/ with %d bytes: nothing reached a pipeline, so the row measured no translation", path, len(data))
				}
				return outcome{input: int64(len(data)), output: size}
			},
		}
	}
}

// envelope is one envelope of items, each an item header and payload.
func envelope(items ...[2]string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","sent_at":"2026-11-28T05:00:00Z"}` + "\n")
	for _, it := range items {
		b.WriteString(it[0])
		b.WriteByte('\n')
		b.WriteString(it[1])
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func item(itemType, payload string) [2]string {
	return [2]string{fmt.Sprintf(`{"type":%q,"length":%d}`, itemType, len(payload)), payload}
}

// repeat joins n renderings of format, each given its index (as many
// times as format has verbs).
func repeat(n int, sep, format string) string {
	var b strings.Builder
	verbs := strings.Count(format, "%d")
	args := make([]any, verbs)
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		for j := range args {
			args[j] = i
		}
		fmt.Fprintf(&b, format, args...)
	}
	return b.String()
}

const (
	// nowSeconds is a timestamp inside every translator's accepted
	// window when the guard runs (Sentry rejects events older than 30 days
	// only at ingestion into storage; the translators keep the time).
	nowSeconds = "1795644001.5"
	traceID    = "2c9f4e8a1b7d4f60a3e5c7b9d1f20486"
	spanID     = "a1b2c3d4e5f60718"
)

func eventWith(members string) string {
	return `{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","timestamp":` + nowSeconds + `,"level":"error","platform":"python",` +
		`"release":"shop@1.4.2","environment":"production",` + members + `}`
}

// logentryBraces is defect 1's shape: n positional placeholders filled
// with one parameter of n bytes; the formatted message is n² bytes.
func logentryBraces(n int) string {
	return `"logentry":{"message":"` + strings.Repeat("{0}", n) + `","params":["` + strings.Repeat("X", n) + `"]}`
}

// logentryNamed is the printf form: n "%(a)s" filled from a map.
func logentryNamed(n int) string {
	return `"logentry":{"message":"` + strings.Repeat("%(a)s", n) + `","params":{"a":"` + strings.Repeat("X", n) + `"}}`
}

// chunkConfig is a V2 chunk whose frames, stacks and threads grow with n.
func chunkConfig(n int) benchdata.ChunkConfig {
	return benchdata.ChunkConfig{Seed: 7, Seconds: 10, Hz: 11, Threads: max(1, n/100), Stacks: n, MinDepth: 2, MaxDepth: 24, Frames: n}
}

// v1Profile is a V1 profile of n samples over n stacks of n frames, bound
// to the transaction v1Transaction.
func v1Profile(n int) string {
	samples := repeat(n, ",", `{"elapsed_since_start_ns":"%d000000","stack_id":%d,"thread_id":"1"}`)
	stacks := repeat(n, ",", `[%d]`)
	frames := repeat(n, ",", `{"function":"fn_%d","filename":"app_%d.py","lineno":3}`)
	return `{"version":"1","event_id":"6f6a0f0b1c1d4e5f8a9b0c1d2e3f4a5b","platform":"python",` +
		`"release":"shop@1.2.3","environment":"test","timestamp":"2026-11-20T10:00:00Z",` +
		`"device":{"architecture":"x86_64"},"os":{"name":"Linux","version":"6.1"},` +
		`"runtime":{"name":"CPython","version":"3.11.4"},` +
		`"transaction":{"id":"a2c6f3cc518c44719ee95a36f07cda36","name":"checkout","trace_id":"dd2619a66dba46f7939c718fdab394b6","active_thread_id":"1"},` +
		`"profile":{"samples":[` + samples + `],"stacks":[` + stacks + `],"frames":[` + frames + `],"thread_metadata":{"1":{"name":"MainThread"}}}}`
}

const v1Transaction = `{"event_id":"a2c6f3cc518c44719ee95a36f07cda36","type":"transaction",` +
	`"transaction":"checkout","start_timestamp":1795000000.0,"timestamp":1795000001.0,` +
	`"contexts":{"trace":{"trace_id":"dd2619a66dba46f7939c718fdab394b6","span_id":"b0e6f15b45c36b12"}}}`

func transaction(spans string) string {
	return `{"event_id":"a2c6f3cc518c44719ee95a36f07cda36","type":"transaction","transaction":"checkout",` +
		`"start_timestamp":1795000000.0,"timestamp":1795000001.0,"platform":"python",` +
		`"contexts":{"trace":{"trace_id":"` + traceID + `","span_id":"` + spanID + `"}},"spans":[` + spans + `]}`
}

// receiverRows are the router's item types through the real HTTP handler,
// each along the dimension a client grows for free.
func receiverRows() []row {
	env := func(itemType string, payload func(n int) string) func(n int) []byte {
		return func(n int) []byte { return envelope(item(itemType, payload(n))) }
	}
	return []row{
		{
			name: "event_logentry_braces", itemType: "event", dimension: "template repetitions × parameter length", n: 400,
			fuzz:   []string{"translator/sentryevent.FuzzAppendLogs", "translator/sentryevent.FuzzFormatMessage", "sentryprofilereceiver.FuzzSignalItem", "reliability.FuzzReceiverHTTP"},
			defect: `#1: a logentry "{0}"×k with a parameter of k bytes formats into k² bytes (40,000 × 100 kB: 4 GB, OOM)`,
			build:  httpRow("envelope", env("event", func(n int) string { return eventWith(logentryBraces(n)) })),
		},
		{
			name: "event_logentry_named", itemType: "event", dimension: "template repetitions × parameter length", n: 400,
			defect: `#1: "%(a)s"×k with a map parameter of k bytes formats into k² bytes`,
			build:  httpRow("envelope", env("event", func(n int) string { return eventWith(logentryNamed(n)) })),
		},
		{
			name: "store_logentry_braces", itemType: "event", dimension: "template repetitions × parameter length", n: 400,
			defect: `#1 through POST /api/<p>/store/`,
			build:  httpRow("store", func(n int) []byte { return []byte(eventWith(logentryBraces(n))) }),
		},
		{
			name: "event_extra_keys", itemType: "event", dimension: "extra keys", n: 2000, clock: ProcessClock,
			fuzz:   []string{"translator/sentrysignal.FuzzEntries", "translator/sentrysignal.FuzzDecodeAny"},
			defect: "#4: each extra key is inserted with a linear search of the keys before it (60,000 keys: 3.5 s)",
			build:  httpRow("envelope", env("event", func(n int) string { return eventWith(`"extra":{` + repeat(n, ",", `"extra_%d":"v%d"`) + `}`) })),
		},
		{
			name: "event_tags", itemType: "event", dimension: "tags", n: 2000, clock: ProcessClock,
			defect: "#4: each tag is inserted with a linear search of the tags before it",
			build:  httpRow("envelope", env("event", func(n int) string { return eventWith(`"tags":{` + repeat(n, ",", `"tag_%d":"v%d"`) + `}`) })),
		},
		{
			name: "event_exception_frames", itemType: "event", dimension: "stack frames", n: 1000,
			build: httpRow("envelope", env("event", func(n int) string {
				return eventWith(`"exception":{"values":[{"type":"ValueError","value":"bad","stacktrace":{"frames":[` +
					repeat(n, ",", `{"function":"fn_%d","filename":"app_%d.py","lineno":7}`) + `]}}]}`)
			})),
		},
		{
			name: "log_attributes", itemType: "log", dimension: "attributes of one log", n: 2000, clock: ProcessClock,
			fuzz:   []string{"translator/sentrylog.FuzzAppendLogs", "translator/sentrysignal.FuzzPutJSON", "translator/sentrysignal.FuzzContainer"},
			defect: "#4: each log attribute is inserted with a linear search of the attributes before it",
			build: httpRow("envelope", env("log", func(n int) string {
				return `{"items":[{"timestamp":` + nowSeconds + `,"level":"info","body":"b","trace_id":"` + traceID + `","attributes":{` +
					repeat(n, ",", `"attr_%d":{"value":"v%d","type":"string"}`) + `}}]}`
			})),
		},
		{
			name: "log_records", itemType: "log", dimension: "logs in one container", n: 1000,
			build: httpRow("envelope", env("log", func(n int) string {
				return `{"items":[` + repeat(n, ",", `{"timestamp":`+nowSeconds+`,"level":"info","body":"line %d","trace_id":"`+traceID+`"}`) + `]}`
			})),
		},
		{
			name: "otel_log_attributes", itemType: "otel_log", dimension: "attributes", n: 2000, clock: ProcessClock,
			fuzz:   []string{"translator/sentrylog.FuzzAppendOTelLog"},
			defect: "#4: each attribute is inserted with a linear search of the attributes before it",
			build: httpRow("envelope", env("otel_log", func(n int) string {
				return `{"severity_text":"info","severity_number":9,"body":{"string_value":"b"},"time_unix_nano":"1795644001234000000",` +
					`"attributes":[` + repeat(n, ",", `{"key":"attr_%d","value":{"string_value":"v%d"}}`) + `]}`
			})),
		},
		{
			name: "check_in_monitor_config", itemType: "check_in", dimension: "monitor_config keys", n: 2000, clock: ProcessClock,
			defect: "#4 (the same insert): each monitor_config key is inserted with a linear search of the keys before it",
			fuzz:   []string{"translator/sentrycheckin.FuzzAppendLogs"},
			build: httpRow("envelope", env("check_in", func(n int) string {
				return `{"check_in_id":"83a7c03ed0a04e1b97e2e3b18d38f244","monitor_slug":"nightly","status":"ok","duration":1.5,` +
					`"monitor_config":{` + repeat(n, ",", `"key_%d":"v%d"`) + `}}`
			})),
		},
		{
			name: "feedback_tags", itemType: "feedback", dimension: "tags", n: 2000, clock: ProcessClock,
			defect: "#4 (the same insert): each tag is inserted with a linear search of the tags before it",
			fuzz:   []string{"translator/sentryfeedback.FuzzAppend"},
			build: httpRow("envelope", env("feedback", func(n int) string {
				return `{"contexts":{"feedback":{"message":"The pay button does nothing","source":"api"}},"type":"feedback",` +
					`"event_id":"e1d2c3b4a5f60718293a4b5c6d7e8f90","platform":"node","timestamp":` + nowSeconds +
					`,"tags":{` + repeat(n, ",", `"tag_%d":"v%d"`) + `}}`
			})),
		},
		{
			name: "user_report_comments", itemType: "user_report", dimension: "comment length (bytes)", n: 64 << 10,
			build: httpRow("envelope", env("user_report", func(n int) string {
				return `{"event_id":"c0ffee00c0ffee00c0ffee00c0ffee00","name":"Jane","comments":"` + strings.Repeat("c", n) + `"}`
			})),
		},
		{
			name: "trace_metric_attributes", itemType: "trace_metric", dimension: "attributes of one metric", n: 2000, clock: ProcessClock,
			fuzz:   []string{"translator/sentrymetric.FuzzAppendMetrics"},
			defect: "#4: each attribute is inserted with a linear search of the attributes before it",
			build: httpRow("envelope", env("trace_metric", func(n int) string {
				return `{"items":[{"timestamp":` + nowSeconds + `,"name":"orders","type":"counter","value":1,"attributes":{` +
					repeat(n, ",", `"attr_%d":{"value":"v%d","type":"string"}`) + `}}]}`
			})),
		},
		{
			name: "statsd_tags", itemType: "statsd", dimension: "tags of one line", n: 2000, clock: ProcessClock,
			fuzz:   []string{"translator/sentrymetric.FuzzAppendStatsd"},
			defect: "#4: each tag is inserted with a linear search of the tags before it",
			build: httpRow("envelope", env("statsd", func(n int) string {
				return "orders@none:3|c|#" + repeat(n, ",", "tag_%d:v%d") + "|T1795646343"
			})),
		},
		{
			name: "session_members", itemType: "session", dimension: "unknown members", n: 2000,
			fuzz: []string{"translator/sentrysession.FuzzAppend", "translator/sentrysignal.FuzzTimestamp"},
			build: httpRow("envelope", env("session", func(n int) string {
				return `{"sid":"1f0a8b4c2d3e4f5061728394a5b6c7d8","init":true,"started":"2026-11-25T22:00:00.100Z",` +
					`"timestamp":"2026-11-25T22:00:00.100Z","status":"ok","errors":0,` + repeat(n, ",", `"x_%d":%d`) +
					`,"attrs":{"release":"shop@1.4.2","environment":"production"}}`
			})),
		},
		{
			name: "sessions_aggregates", itemType: "sessions", dimension: "aggregates", n: 500,
			// Each bucket becomes up to three data points (started, ended,
			// errored), each with its time and labels: about 8× the bytes
			// of its JSON, by a constant factor.
			maxOutput: func(input int64) int64 { return 16*input + 64<<10 },
			build: httpRow("envelope", env("sessions", func(n int) string {
				return `{"aggregates":[` + repeat(n, ",", `{"started":"2026-11-25T22:00:00Z","exited":%d,"errored":2}`) +
					`],"attrs":{"release":"shop@1.4.2","environment":"production"}}`
			})),
		},
		{
			// Client reports feed the receiver's own telemetry, not a
			// pipeline: the event next to them makes the request's
			// outcome visible in the sinks.
			name: "client_report_entries", itemType: "client_report", dimension: "discarded_events entries", n: 2000,
			fuzz: []string{"translator/sentryclientreport.FuzzDecode"},
			build: httpRow("envelope", func(n int) []byte {
				return envelope(item("client_report", `{"timestamp":`+nowSeconds+`,"discarded_events":[`+
					repeat(n, ",", `{"reason":"reason_%d","category":"cat_%d","quantity":3}`)+`]}`),
					item("event", eventWith(`"message":"m"`)))
			}),
		},
		{
			name: "transaction_spans", itemType: "transaction", dimension: "spans", n: 1000,
			fuzz: []string{"translator/sentrytrace.FuzzDecode", "internal/spanindex.FuzzTimeline"},
			build: httpRow("envelope", env("transaction", func(n int) string {
				return transaction(repeat(n, ",", `{"span_id":"%016x","parent_span_id":"`+spanID+`","op":"db","description":"q","start_timestamp":1795000000.1,"timestamp":1795000000.2}`))
			})),
		},
		{
			name: "span_items", itemType: "span", dimension: "spans in one container", n: 1000,
			build: httpRow("envelope", func(n int) []byte {
				spans := repeat(n, ",", `{"trace_id":"`+traceID+`","span_id":"%016x","start_timestamp":1795000000.1,"end_timestamp":1795000000.2,"name":"q"}`)
				return envelope([2]string{fmt.Sprintf(`{"type":"span","item_count":%d,"content_type":"application/vnd.sentry.items.span.v2+json"}`, n),
					`{"version":2,"items":[` + spans + `]}`})
			}),
		},
		{
			name: "profile_v1_samples", itemType: "profile", dimension: "samples, stacks and frames", n: 500,
			fuzz: []string{"translator/sentry.FuzzDecodeProfileV1", "translator/profilesin.FuzzToProfiles"},
			build: httpRow("envelope", func(n int) []byte {
				return envelope(item("transaction", v1Transaction), item("profile", v1Profile(n)))
			}),
		},
		{
			name: "profile_chunk_frames", itemType: "profile_chunk", dimension: "frames, stacks and threads", n: 500,
			fuzz: []string{"translator/sentry.FuzzDecodeProfileV2", "translator/sentry.FuzzDecoderReuse", "translator/sentry.FuzzEncodeRoundTrip"},
			build: httpRow("envelope", func(n int) []byte {
				return benchdata.Envelope("profile_chunk", "python", benchdata.ChunkV2(chunkConfig(n)))
			}),
		},
		{
			name: "profile_chunk_ui_frames", itemType: "profile_chunk_ui", dimension: "frames, stacks and threads", n: 500,
			build: httpRow("envelope", func(n int) []byte {
				return benchdata.Envelope("profile_chunk_ui", "javascript", benchdata.ChunkV2(chunkConfig(n)))
			}),
		},
		itemsRow("log", "translator/envelope.FuzzReader", "translator/envelope.FuzzReaderReset"),
		itemsRow("event"),
		itemsRow("trace_metric"),
		itemsRow("transaction"),
		itemsRow("profile_chunk"),
	}
}

// itemPayloads are small valid payloads of the item types whose rows also
// grow the number of items in one envelope.
var itemPayloads = map[string]string{
	"log":           `{"items":[{"timestamp":` + nowSeconds + `,"level":"info","body":"line","trace_id":"` + traceID + `"}]}`,
	"event":         eventWith(`"message":"m"`),
	"trace_metric":  `{"items":[{"timestamp":` + nowSeconds + `,"name":"orders","type":"counter","value":1}]}`,
	"transaction":   transaction(`{"span_id":"b1b2c3d4e5f60718","op":"db","start_timestamp":1795000000.1,"timestamp":1795000000.2}`),
	"profile_chunk": string(benchdata.ChunkV2(chunkConfig(20))),
}

// itemsRow is an envelope of n items of one type: the per-envelope
// structures (one resource, one dictionary per envelope) must grow by
// amortised doubling, not by the size of each item, which copies them
// once per item.
func itemsRow(itemType string, fuzz ...string) row {
	r := row{
		name: itemType + "_items_per_envelope", itemType: itemType, fuzz: fuzz,
		dimension: "items per envelope (up to the 1,000-item limit)", n: 100,
		build: httpRow("envelope", func(n int) []byte {
			items := make([][2]string, n)
			for i := range items {
				items[i] = item(itemType, itemPayloads[itemType])
			}
			return envelope(items...)
		}),
	}
	switch itemType {
	case "log":
		r.defect = "sentrylog.AppendLogs sizing the envelope's LogRecordSlice exactly (EnsureCapacity(len+k)) for every log item copies it once per item: quadratic in log items per envelope"
	}
	return r
}

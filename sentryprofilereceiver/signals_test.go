package sentryprofilereceiver

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// Payloads of the signal items, written by hand after the SDKs' captures
// (translator/*/testdata), so that the expectations below do not come from
// the code under test.
const (
	eventPayload = `{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","timestamp":1795644001.5,"level":"error",` +
		`"platform":"node","release":"shop@1.4.2","environment":"production","server_name":"build-7",` +
		`"sdk":{"name":"sentry.javascript.node","version":"11.1.0"},` +
		`"contexts":{"os":{"name":"Linux","version":"6.18.0"},"runtime":{"name":"node","version":"v20.19.2"}},` +
		`"message":"payment declined"}`
	logPayload = `{"items":[` +
		`{"timestamp":1795644001.2,"level":"info","body":"order 4711 loaded","trace_id":"2c9f4e8a1b7d4f60a3e5c7b9d1f20486",` +
		`"attributes":{"sentry.release":{"value":"shop@1.4.2","type":"string"},"sentry.environment":{"value":"production","type":"string"},` +
		`"sentry.sdk.name":{"value":"sentry.javascript.node","type":"string"},"sentry.sdk.version":{"value":"11.1.0","type":"string"}}},` +
		`{"timestamp":1795644001.3,"level":"warn","body":"order 4711 slow","trace_id":"2c9f4e8a1b7d4f60a3e5c7b9d1f20486"}]}`
	otelLogPayload = `{"severity_text":"info","severity_number":9,"body":{"string_value":"user logged in"},` +
		`"time_unix_nano":"1795644001234000000","trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174"}`
	checkInPayload = `{"check_in_id":"83a7c03ed0a04e1b97e2e3b18d38f244","monitor_slug":"nightly-export","status":"ok",` +
		`"duration":1.234,"release":"shop@1.4.2","environment":"production"}`
	feedbackPayload = `{"contexts":{"feedback":{"message":"The pay button does nothing","source":"api",` +
		`"associated_event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0"}},"type":"feedback","level":"info",` +
		`"event_id":"e1d2c3b4a5f60718293a4b5c6d7e8f90","platform":"node","timestamp":1795644007.125,` +
		`"environment":"production","release":"shop@1.4.2","sdk":{"name":"sentry.javascript.node","version":"11.1.0"}}`
	userReportPayload = `{"event_id":"c0ffee00c0ffee00c0ffee00c0ffee00","name":"Jane Roe","email":"jane@example.com",` +
		`"comments":"It crashed when I clicked export."}`
	traceMetricPayload = `{"items":[` +
		`{"timestamp":1795644001.3,"name":"orders.shipped","type":"counter","value":1,` +
		`"attributes":{"sentry.release":{"value":"shop@1.4.2","type":"string"},"sentry.environment":{"value":"production","type":"string"}}},` +
		`{"timestamp":1795644001.31,"name":"queue.depth","type":"gauge","value":42}]}`
	statsdPayload  = "orders.shipped@none:3|c|#release:shop@1.4.2,environment:production|T1795646343"
	sessionPayload = `{"sid":"1f0a8b4c2d3e4f5061728394a5b6c7d8","init":true,"started":"2026-11-25T22:00:00.100Z",` +
		`"timestamp":"2026-11-25T22:00:00.100Z","status":"ok","errors":0,"attrs":{"release":"shop@1.4.2","environment":"production"}}`
	sessionsPayload = `{"aggregates":[{"started":"2026-11-25T22:00:00Z","exited":12,"errored":2}],` +
		`"attrs":{"release":"shop@1.4.2","environment":"production"}}`
	clientReportPayload = `{"timestamp":1795646521.25,"discarded_events":[` +
		`{"reason":"sample_rate","category":"transaction","quantity":3},` +
		`{"reason":"queue_overflow","category":"log_item","quantity":5},` +
		`{"reason":"made_up_by_a_client","category":"made_up","quantity":2}]}`
)

// signalSinks are the four pipelines of one receiver configuration; nil
// means the pipeline is not configured.
type signalSinks struct {
	profiles *consumertest.ProfilesSink
	traces   *consumertest.TracesSink
	logs     *consumertest.LogsSink
	metrics  *consumertest.MetricsSink
}

func allSinks() signalSinks {
	return signalSinks{new(consumertest.ProfilesSink), new(consumertest.TracesSink), new(consumertest.LogsSink), new(consumertest.MetricsSink)}
}

// startSignals starts one receiver configuration in the pipelines given,
// as the collector does when they name the same receiver.
func startSignals(t *testing.T, s signalSinks, mutate func(*Config)) *testReceiver {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	// Chunks go through at once: span links are not what these tests are
	// about.
	cfg.Links.Enabled = false
	if mutate != nil {
		mutate(cfg)
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	set.Logger = zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	var handles []component.Component
	add := func(c component.Component, err error) {
		require.NoError(t, err)
		handles = append(handles, c)
	}
	ctx := context.Background()
	if s.profiles != nil {
		add(f.CreateProfiles(ctx, set, cfg, s.profiles))
	}
	if s.traces != nil {
		add(f.CreateTraces(ctx, set, cfg, s.traces))
	}
	if s.logs != nil {
		add(f.CreateLogs(ctx, set, cfg, s.logs))
	}
	if s.metrics != nil {
		add(f.CreateMetrics(ctx, set, cfg, s.metrics))
	}
	for _, h := range handles {
		require.NoError(t, h.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, h.Shutdown(context.Background())) })
	}
	inner := handles[0].(*handle).shared.inner
	return &testReceiver{url: "http://" + inner.listener.Addr().String(), telemetry: tel, rcvr: inner}
}

// logRecords lists every record the sink received, with its resource.
func logRecords(sink *consumertest.LogsSink) ([]plog.LogRecord, []pcommon.Resource) {
	var out []plog.LogRecord
	var res []pcommon.Resource
	for _, ld := range sink.AllLogs() {
		for i := range ld.ResourceLogs().Len() {
			rl := ld.ResourceLogs().At(i)
			for j := range rl.ScopeLogs().Len() {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := range lrs.Len() {
					out = append(out, lrs.At(k))
					res = append(res, rl.Resource())
				}
			}
		}
	}
	return out, res
}

// metricNames lists the name of every metric the sink received, with its
// resource.
func metricNames(sink *consumertest.MetricsSink) ([]string, []pcommon.Resource) {
	var out []string
	var res []pcommon.Resource
	for _, md := range sink.AllMetrics() {
		for i := range md.ResourceMetrics().Len() {
			rm := md.ResourceMetrics().At(i)
			for j := range rm.ScopeMetrics().Len() {
				ms := rm.ScopeMetrics().At(j).Metrics()
				for k := range ms.Len() {
					out = append(out, ms.At(k).Name())
					res = append(res, rm.Resource())
				}
			}
		}
	}
	return out, res
}

func attrStr(m pcommon.Map, key string) string {
	v, _ := m.Get(key)
	return v.AsString()
}

// TestSignalItems: each item type, alone in an envelope, reaches its
// pipeline once, with its fields, under a resource of what it names.
func TestSignalItems(t *testing.T) {
	tests := []struct {
		itemType, payload string
		// wantBodies are the records' bodies, in order (logs signal).
		wantBodies []string
		// wantMetrics are the metrics' names, in any order.
		wantMetrics []string
		// wantResource are resource attributes the item names.
		wantResource map[string]string
	}{
		{itemType: "event", payload: eventPayload, wantBodies: []string{"payment declined"},
			wantResource: map[string]string{"service.name": "shop", "service.version": "shop@1.4.2",
				"deployment.environment.name": "production", "host.name": "build-7", "sentry.platform": "node",
				"telemetry.sdk.name": "sentry.javascript.node", "os.name": "Linux", "process.runtime.version": "v20.19.2"}},
		{itemType: "log", payload: logPayload, wantBodies: []string{"order 4711 loaded", "order 4711 slow"},
			wantResource: map[string]string{"service.version": "shop@1.4.2", "deployment.environment.name": "production",
				"telemetry.sdk.version": "11.1.0"}},
		{itemType: "otel_log", payload: otelLogPayload, wantBodies: []string{"user logged in"},
			wantResource: map[string]string{"service.name": "unknown_service"}},
		{itemType: "check_in", payload: checkInPayload, wantBodies: []string{"nightly-export: ok"},
			wantResource: map[string]string{"service.version": "shop@1.4.2", "deployment.environment.name": "production"}},
		{itemType: "feedback", payload: feedbackPayload, wantBodies: []string{"The pay button does nothing"},
			wantResource: map[string]string{"service.version": "shop@1.4.2", "telemetry.sdk.name": "sentry.javascript.node"}},
		{itemType: "user_report", payload: userReportPayload, wantBodies: []string{"It crashed when I clicked export."},
			wantResource: map[string]string{"sentry.project.id": "42"}},
		{itemType: "trace_metric", payload: traceMetricPayload, wantMetrics: []string{"orders.shipped", "queue.depth"},
			wantResource: map[string]string{"service.version": "shop@1.4.2", "deployment.environment.name": "production"}},
		{itemType: "statsd", payload: statsdPayload, wantMetrics: []string{"orders.shipped"},
			wantResource: map[string]string{"sentry.project.id": "42"}},
		{itemType: "session", payload: sessionPayload, wantMetrics: []string{"sentry.sessions.started"},
			wantResource: map[string]string{"service.version": "shop@1.4.2", "deployment.environment.name": "production"}},
		{itemType: "sessions", payload: sessionsPayload,
			wantMetrics:  []string{"sentry.sessions.started", "sentry.sessions.ended", "sentry.sessions.errored"},
			wantResource: map[string]string{"sentry.project.id": "42"}},
	}
	for _, tt := range tests {
		t.Run(tt.itemType, func(t *testing.T) {
			sinks := allSinks()
			tr := startSignals(t, sinks, nil)
			resp := post(t, tr, envelopeOf(eventHeader, item{header: `{"type":"` + tt.itemType + `"}`, payload: tt.payload}), nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)

			records, recordResources := logRecords(sinks.logs)
			var bodies []string
			for _, lr := range records {
				bodies = append(bodies, lr.Body().AsString())
			}
			assert.Equal(t, tt.wantBodies, bodies, "each record once")
			names, metricResources := metricNames(sinks.metrics)
			assert.ElementsMatch(t, tt.wantMetrics, names, "each metric once")
			assert.LessOrEqual(t, len(sinks.logs.AllLogs())+len(sinks.metrics.AllMetrics()), 1, "one batch for the envelope")
			assert.Zero(t, sinks.profiles.ProfileCount()+sinks.traces.SpanCount())

			for _, res := range append(recordResources, metricResources...) {
				assert.Equal(t, "42", attrStr(res.Attributes(), "sentry.project.id"))
				for k, v := range tt.wantResource {
					assert.Equal(t, v, attrStr(res.Attributes(), k), k)
				}
			}
			_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_ignored_items")
			assert.Error(t, err, "nothing ignored")
		})
	}
}

// TestOneResourcePerEnvelope: an envelope with a profile, a transaction,
// an event, logs, metrics and a session feeds all four pipelines, one
// resource each, naming the same service, version, environment, SDK and
// platform; logs and metrics share their resource whole.
func TestOneResourcePerEnvelope(t *testing.T) {
	sinks := allSinks()
	tr := startSignals(t, sinks, nil)
	transaction := `{"type":"transaction","event_id":"a2c6f3cc518c44719ee95a36f07cda36","platform":"python",` +
		`"release":"shop@1.2.3","environment":"test","sdk":{"name":"sentry.python","version":"2.68.0"},` +
		`"transaction":"checkout","start_timestamp":1795000000.0,"timestamp":1795000001.0,` +
		`"contexts":{"trace":{"trace_id":"dd2619a66dba46f7939c718fdab394b6","span_id":"8a284e3cea10a0ea"}}}`
	event := `{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","platform":"python","release":"shop@1.2.3",` +
		`"environment":"test","server_name":"web-3","sdk":{"name":"sentry.python","version":"2.68.0"},"message":"boom"}`
	body := envelopeOf(eventHeader,
		chunkItem(chunkPayload),
		item{`{"type":"transaction"}`, transaction},
		item{`{"type":"event"}`, event},
		item{`{"type":"log"}`, logPayload},
		item{`{"type":"trace_metric"}`, traceMetricPayload},
		item{`{"type":"session"}`, sessionPayload},
	)
	resp := post(t, tr, body, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)

	require.Len(t, sinks.profiles.AllProfiles(), 1)
	require.Len(t, sinks.traces.AllTraces(), 1)
	require.Len(t, sinks.logs.AllLogs(), 1)
	require.Len(t, sinks.metrics.AllMetrics(), 1)
	logs, metrics := sinks.logs.AllLogs()[0], sinks.metrics.AllMetrics()[0]
	require.Equal(t, 1, logs.ResourceLogs().Len(), "one ResourceLogs per envelope")
	require.Equal(t, 1, metrics.ResourceMetrics().Len(), "one ResourceMetrics per envelope")
	assert.Equal(t, 3, logs.LogRecordCount(), "the event and both log entries")

	resources := []pcommon.Resource{
		sinks.profiles.AllProfiles()[0].ResourceProfiles().At(0).Resource(),
		sinks.traces.AllTraces()[0].ResourceSpans().At(0).Resource(),
		logs.ResourceLogs().At(0).Resource(),
		metrics.ResourceMetrics().At(0).Resource(),
	}
	// The chunk names shop@1.2.3, test, python and sentry.python 2.68.0
	// first; the event's and the log's other values fill nothing it named.
	want := map[string]string{"service.name": "shop", "service.version": "shop@1.2.3", "deployment.environment.name": "test",
		"sentry.platform": "python", "telemetry.sdk.name": "sentry.python", "telemetry.sdk.version": "2.68.0", "sentry.project.id": "42"}
	for i, res := range resources {
		for k, v := range want {
			assert.Equal(t, v, attrStr(res.Attributes(), k), "resource %d: %s", i, k)
		}
	}
	assert.Equal(t, "web-3", attrStr(resources[2].Attributes(), "host.name"), "the event's server_name")
	assert.Equal(t, resources[2].Attributes().AsRaw(), resources[3].Attributes().AsRaw(), "logs and metrics: one resource")

	// obsreport: one operation per signal, counting records and points.
	accepted, err := tr.telemetry.GetMetric("otelcol_receiver_accepted_log_records")
	require.NoError(t, err)
	assert.Equal(t, int64(3), accepted.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
	accepted, err = tr.telemetry.GetMetric("otelcol_receiver_accepted_metric_points")
	require.NoError(t, err)
	assert.Equal(t, int64(metrics.DataPointCount()), accepted.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
}

// TestSignalsWithoutTheirPipelines: a receiver in traces or profiles
// pipelines only counts the logs and metrics items as ignored, by type,
// and still counts the SDKs' client reports.
func TestSignalsWithoutTheirPipelines(t *testing.T) {
	for name, sinks := range map[string]signalSinks{
		"traces only":   {traces: new(consumertest.TracesSink)},
		"profiles only": {profiles: new(consumertest.ProfilesSink)},
	} {
		t.Run(name, func(t *testing.T) {
			tr := startSignals(t, sinks, nil)
			body := envelopeOf(eventHeader,
				item{`{"type":"event"}`, eventPayload}, item{`{"type":"log"}`, logPayload},
				item{`{"type":"session"}`, sessionPayload}, item{`{"type":"sessions"}`, sessionsPayload},
				item{`{"type":"check_in"}`, checkInPayload}, item{`{"type":"attachment"}`, "raw bytes"},
				item{`{"type":"client_report"}`, clientReportPayload},
			)
			resp := post(t, tr, body, nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			typ := func(s string) metricdata.DataPoint[int64] {
				return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("item_type", s)), Value: 1}
			}
			metadatatest.AssertEqualReceiverSentryprofileIgnoredItems(t, tr.telemetry, []metricdata.DataPoint[int64]{
				typ("event"), typ("log"), typ("session"), typ("sessions"), typ("check_in"), typ("attachment"),
			}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
			_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_sdk_discarded")
			assert.NoError(t, err, "client reports are the receiver's own telemetry")
		})
	}
}

// TestClientReports: what SDKs say they discarded is counted by reason and
// category, each count's quantity; values outside Sentry's lists are
// "other", and an unreadable report counts nothing.
func TestClientReports(t *testing.T) {
	tr := startSignals(t, signalSinks{logs: new(consumertest.LogsSink)}, nil)
	body := envelopeOf(eventHeader,
		item{`{"type":"client_report"}`, clientReportPayload},
		item{`{"type":"client_report"}`, `{"discarded_events":[{"reason":"sample_rate","category":"transaction","quantity":-1}]}`},
	)
	resp := post(t, tr, body, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	point := func(reason, category string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(
			attribute.String("discard_reason", reason), attribute.String("discard_category", category)), Value: n}
	}
	metadatatest.AssertEqualReceiverSentryprofileSdkDiscarded(t, tr.telemetry, []metricdata.DataPoint[int64]{
		point("sample_rate", "transaction", 3), point("queue_overflow", "log_item", 5), point("other", "other", 2),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualReceiverSentryprofileDiscardedSignalItems(t, tr.telemetry, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("item_type", "client_report"), attribute.String("drop_scope", "item")), Value: 1},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestBadSignalItemAmongGood: an item a translator cannot read is dropped
// alone, and a container's bad entries alone; both are counted.
func TestBadSignalItemAmongGood(t *testing.T) {
	sinks := allSinks()
	tr := startSignals(t, sinks, nil)
	badLogs := `{"items":[{"timestamp":1795644001.2,"level":"info","body":"kept"},{"timestamp":"yesterday","body":"dropped"}]}`
	body := envelopeOf(eventHeader,
		item{`{"type":"event"}`, `{"event_id":`},
		item{`{"type":"log"}`, badLogs},
		item{`{"type":"event"}`, eventPayload},
		item{`{"type":"session"}`, `[]`},
		item{`{"type":"trace_metric"}`, traceMetricPayload},
	)
	resp := post(t, tr, body, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)

	records, _ := logRecords(sinks.logs)
	var bodies []string
	for _, lr := range records {
		bodies = append(bodies, lr.Body().AsString())
	}
	assert.Equal(t, []string{"kept", "payment declined"}, bodies)
	names, _ := metricNames(sinks.metrics)
	assert.ElementsMatch(t, []string{"orders.shipped", "queue.depth"}, names)

	point := func(itemType, scope string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(
			attribute.String("item_type", itemType), attribute.String("drop_scope", scope)), Value: 1}
	}
	metadatatest.AssertEqualReceiverSentryprofileDiscardedSignalItems(t, tr.telemetry, []metricdata.DataPoint[int64]{
		point("event", "item"), point("log", "entry"), point("session", "item"),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestSignalPipelineRefuses: a busy logs pipeline makes the envelope a
// 429, as a busy traces pipeline does; the profiles, the spans and the
// metrics still go through.
func TestSignalPipelineRefuses(t *testing.T) {
	sinks := allSinks()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.Links.Enabled = false
	tel := componenttest.NewTelemetry()
	set := metadatatest.NewSettings(tel)
	set.Logger = zaptest.NewLogger(t)
	ctx := context.Background()
	var handles []component.Component
	for _, create := range []func() (component.Component, error){
		func() (component.Component, error) { return f.CreateProfiles(ctx, set, cfg, sinks.profiles) },
		func() (component.Component, error) { return f.CreateTraces(ctx, set, cfg, sinks.traces) },
		func() (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg, consumertest.NewErr(errors.New("memory limiter: data refused")))
		},
		func() (component.Component, error) { return f.CreateMetrics(ctx, set, cfg, sinks.metrics) },
	} {
		h, err := create()
		require.NoError(t, err)
		handles = append(handles, h)
	}
	for _, h := range handles {
		require.NoError(t, h.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, h.Shutdown(context.Background())) })
	}
	inner := handles[0].(*handle).shared.inner
	tr := &testReceiver{url: "http://" + inner.listener.Addr().String()}
	tx := readTraceInput(t, "transaction_static.json")
	resp := post(t, tr, envelopeOf(eventHeader, tx.item, chunkItem(chunkPayload),
		item{`{"type":"event"}`, eventPayload}, item{`{"type":"session"}`, sessionPayload}), nil)
	assert.Equal(t, http.StatusTooManyRequests, resp.status, resp.body)
	assert.NotEmpty(t, resp.header.Get("Retry-After"))
	assert.Equal(t, chunkSamples, sampleEvents(sinks.profiles))
	assert.Equal(t, tx.spanIDs, spanIDsOf(sinks.traces))
	names, _ := metricNames(sinks.metrics)
	assert.Contains(t, names, "sentry.sessions.started")
	refused, err := tel.GetMetric("otelcol_receiver_refused_log_records")
	require.NoError(t, err)
	assert.Equal(t, int64(1), refused.Data.(metricdata.Sum[int64]).DataPoints[0].Value, "the event, refused")
}

// TestFourPipelineLifecycle: a receiver in all four pipelines listens once
// the last has started, and stops on the first Shutdown, whichever it is;
// the later ones find it stopped.
func TestFourPipelineLifecycle(t *testing.T) {
	for first := range 4 {
		t.Run([]string{"profiles", "traces", "logs", "metrics"}[first]+" stops first", func(t *testing.T) {
			sinks := allSinks()
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*Config)
			cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
			set := metadatatest.NewSettings(componenttest.NewTelemetry())
			set.Logger = zaptest.NewLogger(t)
			ctx := context.Background()
			p, err := f.CreateProfiles(ctx, set, cfg, sinks.profiles)
			require.NoError(t, err)
			tc, err := f.CreateTraces(ctx, set, cfg, sinks.traces)
			require.NoError(t, err)
			l, err := f.CreateLogs(ctx, set, cfg, sinks.logs)
			require.NoError(t, err)
			m, err := f.CreateMetrics(ctx, set, cfg, sinks.metrics)
			require.NoError(t, err)
			handles := []receiverComponent{p, tc, l, m}
			inner := p.(*handle).shared.inner
			for i, h := range handles {
				assert.Nil(t, inner.listener, "not listening before every pipeline has started (%d started)", i)
				require.NoError(t, h.Start(ctx, componenttest.NewNopHost()))
			}
			require.NotNil(t, inner.listener)
			tr := &testReceiver{url: "http://" + inner.listener.Addr().String()}
			resp := post(t, tr, envelopeOf(eventHeader, item{`{"type":"event"}`, eventPayload}, item{`{"type":"session"}`, sessionPayload}), nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			assert.Equal(t, 1, sinks.logs.LogRecordCount())
			assert.Len(t, sinks.metrics.AllMetrics(), 1)

			require.NoError(t, handles[first].Shutdown(ctx))
			_, err = http.Post(tr.url+"/api/42/envelope/", "", nil)
			assert.Error(t, err, "nothing listens once the first pipeline has stopped")
			for i, h := range handles {
				if i != first {
					require.NoError(t, h.Shutdown(ctx))
				}
			}
		})
	}
}

type receiverComponent interface {
	component.Component
}

var (
	_ receiver.Logs    = (*handle)(nil)
	_ receiver.Metrics = (*handle)(nil)
)

// TestEverySignalRowIsTested: TestSignalItems's table names every logs
// and metrics row of the router.
func TestEverySignalRowIsTested(t *testing.T) {
	for _, r := range itemRoutes {
		if r.logs != nil || r.metrics != nil {
			assert.Contains(t, signalItemTypesTested, r.itemType)
		}
	}
}

var signalItemTypesTested = []string{"event", "log", "otel_log", "check_in", "feedback", "user_report",
	"trace_metric", "statsd", "session", "sessions"}

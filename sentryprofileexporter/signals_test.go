package sentryprofileexporter

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadatatest"
)

// signalRelay records the envelopes it gets and answers each as told.
type signalRelay struct {
	srv    *httptest.Server
	answer func(n int) reply

	mu        sync.Mutex
	envelopes [][]byte
	requests  int
}

func newSignalRelay(t *testing.T, answer func(n int) reply) *signalRelay {
	r := &signalRelay{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var in io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			in = zr
		}
		body, _ := io.ReadAll(in)
		r.mu.Lock()
		r.requests++
		n := r.requests
		r.mu.Unlock()
		a := r.answer(n)
		if a.status == 0 || a.status/100 == 2 {
			r.mu.Lock()
			r.envelopes = append(r.envelopes, body)
			r.mu.Unlock()
		}
		for k, vs := range a.header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(max(a.status, http.StatusOK))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *signalRelay) dsn() string {
	return "http://" + testPublicKey + "@" + r.srv.Listener.Addr().String() + "/" + testProjectID
}

func (r *signalRelay) counts() (requests, accepted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, len(r.envelopes)
}

// startSignalExporter builds the exporter itself (no exporterhelper), so
// that a push's error is what the test reads.
func startSignalExporter(t *testing.T, dsn string, mutate func(*Config)) (*sentryExporter, *componenttest.Telemetry) {
	t.Helper()
	cfg := newTestConfig(dsn)
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	exp, err := newExporter(cfg, set)
	require.NoError(t, err)
	require.NoError(t, exp.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, exp.shutdown(context.Background())) })
	return exp, tel
}

// exceptionLogs is one resource per service, each with n exception records.
func exceptionLogs(n int, services ...string) plog.Logs {
	ld := plog.NewLogs()
	for _, svc := range services {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", svc)
		rl.Resource().Attributes().PutStr("telemetry.sdk.language", "go")
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		for i := 0; i < n; i++ {
			lr := lrs.AppendEmpty()
			lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
			lr.Attributes().PutStr("exception.type", "*errors.errorString")
			lr.Attributes().PutStr("exception.message", "boom")
		}
	}
	return ld
}

// envelopeItems reads an envelope: its header and each item's header and
// payload.
func envelopeItems(t *testing.T, body []byte) (map[string]any, []map[string]any, [][]byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 4<<20)
	var header map[string]any
	require.True(t, sc.Scan())
	require.NoError(t, json.Unmarshal(sc.Bytes(), &header))
	var heads []map[string]any
	var payloads [][]byte
	for sc.Scan() {
		var h map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &h))
		require.True(t, sc.Scan())
		heads = append(heads, h)
		payloads = append(payloads, append([]byte(nil), sc.Bytes()...))
	}
	return header, heads, payloads
}

func TestPushLogsDelivers(t *testing.T) {
	relay := newSignalRelay(t, func(int) reply { return reply{status: http.StatusOK} })
	exp, tel := startSignalExporter(t, relay.dsn(), nil)
	require.NoError(t, exp.pushLogs(context.Background(), exceptionLogs(3, "checkout")))

	_, accepted := relay.counts()
	require.Equal(t, 3, accepted, "one envelope per event: Relay takes one event item per envelope")
	for _, body := range relay.envelopes {
		header, heads, payloads := envelopeItems(t, body)
		require.Len(t, heads, 1)
		assert.Equal(t, itemTypeEvent, heads[0]["type"])
		var ev map[string]any
		require.NoError(t, json.Unmarshal(payloads[0], &ev))
		assert.Equal(t, ev["event_id"], header["event_id"], "the envelope names its event")
		assert.Equal(t, "go", ev["platform"])
	}
	assert.Equal(t, int64(3), counter(t, tel, "events_sent", ""))
}

func TestPushMetricsDelivers(t *testing.T) {
	relay := newSignalRelay(t, func(int) reply { return reply{status: http.StatusOK} })
	exp, tel := startSignalExporter(t, relay.dsn(), nil)
	md := pmetric.NewMetrics()
	g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("queue.depth")
	for i := 0; i < 5; i++ {
		g.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	g.Gauge().DataPoints().AppendEmpty().SetIntValue(7)
	require.NoError(t, exp.pushMetrics(context.Background(), md))
	require.Len(t, relay.envelopes, 1)
	_, heads, payloads := envelopeItems(t, relay.envelopes[0])
	require.Len(t, heads, 1)
	assert.Equal(t, "trace_metric", heads[0]["type"])
	assert.Equal(t, contentTypeTraceMetric, heads[0]["content_type"])
	assert.InDelta(t, 2, heads[0]["item_count"], 0)
	assert.Contains(t, string(payloads[0]), `"name":"queue.depth"`)
	assert.Equal(t, int64(2), counter(t, tel, "metrics_sent", ""))
}

// TestSignalAnswers: each of Sentry's answers to an error event, and what
// the push makes of it. Rate limits hold (a retry, nothing dropped), a
// limit on another category does not, refusals and permanent redirects
// drop with their reason.
func TestSignalAnswers(t *testing.T) {
	tests := []struct {
		name         string
		first        reply
		wantRetry    bool
		wantDropped  string
		wantSent     int64
		secondPushes bool // a second push right after makes no request
	}{
		{"accepted", reply{status: http.StatusOK}, false, "", 1, false},
		{"429 on error", reply{status: http.StatusTooManyRequests, header: http.Header{
			"X-Sentry-Rate-Limits": {"3600:error:organization:usage_exceeded"}}}, true, "", 0, true},
		{"200 limiting error", reply{status: http.StatusOK, header: http.Header{
			"X-Sentry-Rate-Limits": {"3600:error:organization"}}}, false, "", 1, true},
		{"limit on trace_metric only", reply{status: http.StatusOK, header: http.Header{
			"X-Sentry-Rate-Limits": {"3600:trace_metric:organization"}}}, false, "", 1, false},
		{"400", reply{status: http.StatusBadRequest}, false, reasonRejected, 0, false},
		{"301 not followed", reply{status: http.StatusMovedPermanently, header: http.Header{"Location": {"http://elsewhere.invalid/"}}}, false, reasonRedirected, 0, false},
		{"503 retried", reply{status: http.StatusServiceUnavailable}, true, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			relay := newSignalRelay(t, func(n int) reply {
				if n == 1 {
					return tt.first
				}
				return reply{status: http.StatusOK}
			})
			exp, tel := startSignalExporter(t, relay.dsn(), nil)
			err := exp.pushLogs(context.Background(), exceptionLogs(1, "checkout"))
			assert.Equal(t, tt.wantRetry, err != nil && !consumererror.IsPermanent(err), "retry error: %v", err)
			if tt.wantDropped != "" {
				require.True(t, consumererror.IsPermanent(err), "want a permanent error, got %v", err)
				assert.Equal(t, int64(1), counter(t, tel, "events_dropped", tt.wantDropped))
			} else {
				assert.Zero(t, counter(t, tel, "events_dropped", ""), "nothing dropped")
			}
			assert.Equal(t, tt.wantSent, counter(t, tel, "events_sent", ""))
			if tt.secondPushes {
				err := exp.pushLogs(context.Background(), exceptionLogs(1, "checkout"))
				require.Error(t, err)
				require.False(t, consumererror.IsPermanent(err))
				requests, _ := relay.counts()
				assert.Equal(t, 1, requests, "a rate-limited category is not sent until the limit ends")
			}
		})
	}
}

// TestSignalPartialRetry: of two resources routed to two projects, the
// rate-limited one alone comes back for retry; the other is not sent again.
func TestSignalPartialRetry(t *testing.T) {
	ok := newSignalRelay(t, func(int) reply { return reply{status: http.StatusOK} })
	limited := newSignalRelay(t, func(int) reply {
		return reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"60"}}}
	})
	exp, tel := startSignalExporter(t, ok.dsn(), func(c *Config) {
		c.Routing.DSNs = map[string]configopaque.String{"billing": configopaque.String(limited.dsn())}
	})
	err := exp.pushLogs(context.Background(), exceptionLogs(2, "checkout", "billing"))
	require.Error(t, err)
	var partial consumererror.Logs
	require.ErrorAs(t, err, &partial, "want the resources to retry")
	retry := partial.Data()
	require.Equal(t, 1, retry.ResourceLogs().Len())
	svc, _ := retry.ResourceLogs().At(0).Resource().Attributes().Get("service.name")
	assert.Equal(t, "billing", svc.Str())
	_, accepted := ok.counts()
	assert.Equal(t, 2, accepted)
	assert.Zero(t, counter(t, tel, "events_dropped", ""))

	// The retry (the copy) sends nothing while the limit lasts.
	require.Error(t, exp.pushLogs(context.Background(), retry))
	requests, _ := limited.counts()
	assert.Equal(t, 1, requests)
}

// BenchmarkPushLogs: exceptions through the exporter to a local Sentry
// stand-in that accepts everything: translation, envelope, gzip, HTTP.
func BenchmarkPushLogs(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(srv.Close)
	cfg := newTestConfig("http://" + testPublicKey + "@" + srv.Listener.Addr().String() + "/" + testProjectID)
	tel := componenttest.NewTelemetry()
	exp, err := newExporter(cfg, metadatatest.NewSettings(tel))
	require.NoError(b, err)
	require.NoError(b, exp.start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { _ = exp.shutdown(context.Background()) })
	ld := exceptionLogs(100, "checkout")
	for _, lr := range ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		lr.Attributes().PutStr("exception.stacktrace", "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d\n")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := exp.pushLogs(context.Background(), ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "exceptions/s")
}

// TestSignalsShareRateLimits: the pipelines of one configuration share
// their projects, so a limit on every category that Sentry announced in
// answer to an error event holds back the metrics as well, without a
// request.
func TestSignalsShareRateLimits(t *testing.T) {
	relay := newSignalRelay(t, func(int) reply {
		return reply{status: http.StatusTooManyRequests, header: http.Header{"X-Sentry-Rate-Limits": {"3600::organization"}}}
	})
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.Enabled = false
	logsExp, metricsExp := startLogsAndMetrics(t, cfg)
	ctx := context.Background()

	require.Error(t, logsExp.ConsumeLogs(ctx, exceptionLogs(1, "checkout")))
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("queue.depth")
	m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
	err := metricsExp.ConsumeMetrics(ctx, md)
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err), "held, not dropped: %v", err)
	requests, _ := relay.counts()
	assert.Equal(t, 1, requests, "the metrics pipeline knew the limit the logs pipeline learnt")
}

// TestSignalsLifecycle: every pipeline of one configuration is created,
// started, fed and shut down, with and without the queue; the shared
// exporter starts once and stops with the last pipeline (the package's
// goleak check finds anything left running).
func TestSignalsLifecycle(t *testing.T) {
	relay := newSignalRelay(t, func(int) reply { return reply{status: http.StatusOK} })
	tests := []struct {
		name  string
		queue bool
	}{{"default queue", true}, {"no queue", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := newTestConfig(relay.dsn())
			if !tt.queue {
				cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
			}
			f := NewFactory()
			set := exportertest.NewNopSettings(f.Type())
			ctx := context.Background()
			le, err := f.CreateLogs(ctx, set, cfg)
			require.NoError(t, err)
			te, err := f.CreateTraces(ctx, set, cfg)
			require.NoError(t, err)
			me, err := f.CreateMetrics(ctx, set, cfg)
			require.NoError(t, err)
			pe, err := f.CreateProfiles(ctx, set, cfg)
			require.NoError(t, err)
			comps := []component.Component{le, te, me, pe}
			for _, c := range comps {
				require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
			}
			require.NoError(t, le.ConsumeLogs(ctx, exceptionLogs(1, "checkout")))
			require.NoError(t, te.ConsumeTraces(ctx, ptrace.NewTraces()))
			require.NoError(t, me.ConsumeMetrics(ctx, pmetric.NewMetrics()))
			for _, c := range comps {
				require.NoError(t, c.Shutdown(ctx))
			}
		})
	}
	_, accepted := relay.counts()
	assert.Equal(t, 2, accepted, "one event per run, flushed by Shutdown")
}

// TestPushMetricsBatchesPerProject: the resources routed to one project
// share a trace_metric container, one envelope per project.
func TestPushMetricsBatchesPerProject(t *testing.T) {
	main := newSignalRelay(t, func(int) reply { return reply{status: http.StatusOK} })
	billing := newSignalRelay(t, func(int) reply { return reply{status: http.StatusOK} })
	exp, tel := startSignalExporter(t, main.dsn(), func(c *Config) {
		c.Routing.DSNs = map[string]configopaque.String{"billing": configopaque.String(billing.dsn())}
	})
	md := pmetric.NewMetrics()
	for _, svc := range []string{"checkout", "billing", "search"} {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", svc)
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("requests")
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
	}
	require.NoError(t, exp.pushMetrics(context.Background(), md))
	require.Len(t, main.envelopes, 1, "checkout and search in one envelope")
	_, heads, _ := envelopeItems(t, main.envelopes[0])
	require.Len(t, heads, 1)
	assert.InDelta(t, 2, heads[0]["item_count"], 0)
	require.Len(t, billing.envelopes, 1)
	assert.Equal(t, int64(3), counter(t, tel, "metrics_sent", ""))
}

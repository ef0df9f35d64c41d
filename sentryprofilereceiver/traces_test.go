package sentryprofilereceiver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// traceInput is a trace item of the translator's testdata, with the span
// ids it holds read here with encoding/json, not by the code under test.
type traceInput struct {
	item    item
	spanIDs []string
}

func readTraceInput(t *testing.T, name string) traceInput {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "translator", "testdata", "traces", name))
	require.NoError(t, err)
	var doc struct {
		Type     string `json:"type"`
		Contexts struct {
			Trace struct {
				SpanID string `json:"span_id"`
			} `json:"trace"`
		} `json:"contexts"`
		Spans []struct {
			SpanID string `json:"span_id"`
		} `json:"spans"`
		Items []struct {
			SpanID string `json:"span_id"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	in := traceInput{}
	if doc.Type == "transaction" {
		in.item = item{header: `{"type":"transaction"}`, payload: string(compactJSON(t, raw))}
		in.spanIDs = append(in.spanIDs, doc.Contexts.Trace.SpanID)
		for _, s := range doc.Spans {
			in.spanIDs = append(in.spanIDs, s.SpanID)
		}
		return in
	}
	in.item = item{
		header:  `{"type":"span","item_count":` + itoa(len(doc.Items)) + `,"content_type":"application/vnd.sentry.items.span.v2+json"}`,
		payload: string(compactJSON(t, raw)),
	}
	for _, s := range doc.Items {
		in.spanIDs = append(in.spanIDs, s.SpanID)
	}
	return in
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// compactJSON puts a pretty-printed document on one envelope line.
func compactJSON(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

// spanIDsOf lists the ids of every span the sink received, in order.
func spanIDsOf(sink *consumertest.TracesSink) []string {
	var ids []string
	for _, td := range sink.AllTraces() {
		for i := range td.ResourceSpans().Len() {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					ids = append(ids, spans.At(k).SpanID().String())
				}
			}
		}
	}
	return ids
}

// sharedTestReceiver is a receiver started for one or both signals.
type sharedTestReceiver struct {
	testReceiver
	profiles, traces interface {
		Shutdown(context.Context) error
	}
}

// startShared starts the receivers of the signals given (nil = no
// pipeline of that signal) from one configuration, as the collector does
// when a traces and a profiles pipeline name the same receiver.
func startShared(t *testing.T, profiles xconsumer.Profiles, traces consumer.Traces) *sharedTestReceiver {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	set.Logger = zaptest.NewLogger(t, zaptest.Level(zap.DebugLevel))

	out := &sharedTestReceiver{testReceiver: testReceiver{telemetry: tel}}
	start := func(r interface {
		Start(context.Context, component.Host) error
		Shutdown(context.Context) error
	}) {
		require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
		out.rcvr = r.(*handle).shared.inner
	}
	if traces != nil {
		r, err := f.CreateTraces(context.Background(), set, cfg, traces)
		require.NoError(t, err)
		start(r)
		out.traces = r
	}
	if profiles != nil {
		r, err := f.CreateProfiles(context.Background(), set, cfg, profiles)
		require.NoError(t, err)
		start(r)
		out.profiles = r
	}
	out.url = "http://" + out.rcvr.listener.Addr().String()
	return out
}

// TestTracesAndProfilesShareOneEndpoint: one envelope with a transaction and
// its V1 profile feeds both pipelines; the endpoint stops with the first of
// them (see TestSharedReceiverLifecycle).
func TestTracesAndProfilesShareOneEndpoint(t *testing.T) {
	profiles := new(consumertest.ProfilesSink)
	traces := new(consumertest.TracesSink)
	tr := startShared(t, profiles, traces)

	tx := readTraceInput(t, "transaction_static.json")
	spans := readTraceInput(t, "spans_v2.json")
	resp := post(t, &tr.testReceiver, envelopeOf(eventHeader, tx.item, spans.item, item{header: `{"type":"profile"}`, payload: v1Payload}), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)

	assert.Equal(t, v1Samples, sampleEvents(profiles), "the profile goes down the profiles pipeline")
	assert.ElementsMatch(t, append(append([]string{}, tx.spanIDs...), spans.spanIDs...), spanIDsOf(traces),
		"every span of the transaction and of the span container, once")
	_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_ignored_items")
	assert.Error(t, err, "no item was ignored")

	require.NoError(t, tr.traces.Shutdown(context.Background()))
	_, err = http.Post(tr.url+"/api/42/envelope/", "", nil)
	assert.Error(t, err, "nothing listens once the first pipeline has stopped")
	require.NoError(t, tr.profiles.Shutdown(context.Background()), "the second Shutdown finds it stopped")
}

// stoppingProfiles and stoppingTraces stand for a pipeline whose exporter
// the collector stops: after stop, a Consume is an error, and is counted,
// since a real exporter would lose (or crash on) what it gets then.
type stoppingProfiles struct {
	consumertest.ProfilesSink
	stopped, late atomic.Int32
}

func (s *stoppingProfiles) ConsumeProfiles(ctx context.Context, pd pprofile.Profiles) error {
	if s.stopped.Load() != 0 {
		s.late.Add(1)
		return errors.New("exporter stopped")
	}
	return s.ProfilesSink.ConsumeProfiles(ctx, pd)
}

type stoppingTraces struct {
	consumertest.TracesSink
	stopped, late atomic.Int32
}

func (s *stoppingTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if s.stopped.Load() != 0 {
		s.late.Add(1)
		return errors.New("exporter stopped")
	}
	return s.TracesSink.ConsumeTraces(ctx, td)
}

// TestSharedReceiverLifecycle: a receiver in a profiles and a traces
// pipeline listens once both have started, and on the first Shutdown,
// whichever pipeline it comes from, flushes its held chunks into the
// profiles pipeline while it still runs; the other pipeline's exporter may
// stop right after (the collector orders two pipelines' shutdowns by a
// topological sort), and nothing reaches it later.
func TestSharedReceiverLifecycle(t *testing.T) {
	for _, profilesFirst := range []bool{true, false} {
		name := map[bool]string{true: "profiles pipeline stops first", false: "traces pipeline stops first"}[profilesFirst]
		t.Run(name, func(t *testing.T) {
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*Config)
			cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
			cfg.Links.Wait = time.Minute // held until Shutdown
			set := metadatatest.NewSettings(componenttest.NewTelemetry())
			set.Logger = zaptest.NewLogger(t)
			profiles, traces := new(stoppingProfiles), new(stoppingTraces)
			pr, err := f.CreateProfiles(context.Background(), set, cfg, profiles)
			require.NoError(t, err)
			tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
			require.NoError(t, err)
			inner := pr.(*handle).shared.inner

			require.NoError(t, pr.Start(context.Background(), componenttest.NewNopHost()))
			assert.Nil(t, inner.listener, "not listening before every pipeline has started")
			require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
			require.NotNil(t, inner.listener)
			rcv := &testReceiver{url: "http://" + inner.listener.Addr().String()}

			resp := post(t, rcv, envelopeOf(eventHeader, chunkItem(chunkPayload), transactionItem(linkTransaction)), nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			assert.Zero(t, sampleEvents(&profiles.ProfilesSink), "held for links::wait")

			first, second := component.Component(pr), component.Component(tr)
			if !profilesFirst {
				first, second = second, first
			}
			require.NoError(t, first.Shutdown(context.Background()))
			assert.Equal(t, chunkSamples, sampleEvents(&profiles.ProfilesSink), "the held chunk went down a running pipeline")
			profiles.stopped.Store(1)
			traces.stopped.Store(1)
			require.NoError(t, second.Shutdown(context.Background()))
			assert.Zero(t, profiles.late.Load()+traces.late.Load(), "nothing reached a stopped exporter")
		})
	}
}

// TestTracesOnly: without a profiles pipeline, profile items are counted as
// ignored, and a span item that cannot be read is dropped alone.
func TestTracesOnly(t *testing.T) {
	traces := new(consumertest.TracesSink)
	tr := startShared(t, nil, traces)

	spans := readTraceInput(t, "spans_v2.json")
	broken := item{header: `{"type":"span","content_type":"application/vnd.sentry.items.span.v2+json"}`, payload: `{"version":2,"items":[{"span_id":`}
	resp := post(t, &tr.testReceiver, envelopeOf(eventHeader, chunkItem(chunkPayload), broken, spans.item), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Equal(t, spans.spanIDs, spanIDsOf(traces))

	one := func(attr, value string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String(attr, value)), Value: 1}
	}
	metadatatest.AssertEqualReceiverSentryprofileIgnoredItems(t, tr.telemetry, []metricdata.DataPoint[int64]{one("item_type", "profile_chunk")},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualReceiverSentryprofileDiscardedTraceItems(t, tr.telemetry, []metricdata.DataPoint[int64]{one("item_type", "span")},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestTracesRefusedByPipeline: a busy traces pipeline makes the envelope a
// 429, as a busy profiles pipeline does, and the profiles still go through
// (an SDK does not resend a refused envelope).
func TestTracesRefusedByPipeline(t *testing.T) {
	profiles := new(consumertest.ProfilesSink)
	tr := startShared(t, profiles, consumertest.NewErr(errors.New("memory limiter: data refused")))

	tx := readTraceInput(t, "transaction_static.json")
	resp := post(t, &tr.testReceiver, envelopeOf(eventHeader, tx.item, chunkItem(chunkPayload)), nil)
	assert.Equal(t, http.StatusTooManyRequests, resp.status, resp.body)
	assert.NotEmpty(t, resp.header.Get("Retry-After"))
	assert.Equal(t, chunkSamples, sampleEvents(profiles))
}

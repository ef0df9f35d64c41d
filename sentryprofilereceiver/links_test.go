package sentryprofilereceiver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// The spans of chunkPayload's profiler, by hand: a transaction on thread 1
// from .005 to .030 with a child from .008 to .015 (no thread: the
// segment's), so chunkPayload's samples at .000, .010 and .020 link to
// nothing, the child and the root.
const (
	linkTrace = "dd2619a66dba46f7939c718fdab394b6"
	linkRoot  = "a1a1a1a1a1a1a1a1"
	linkChild = "b2b2b2b2b2b2b2b2"

	linkTransaction = `{"type":"transaction","event_id":"5e4a6d9c2b1f4f7e8d0c1b2a39485766",` +
		`"transaction":"checkout","platform":"python","start_timestamp":1795000000.005,"timestamp":1795000000.030,` +
		`"contexts":{"trace":{"trace_id":"` + linkTrace + `","span_id":"` + linkRoot + `","op":"http.server",` +
		`"data":{"thread.id":"1","thread.name":"MainThread"}},` +
		`"profile":{"profiler_id":"` + linkProfilerID + `"}},` +
		`"spans":[{"trace_id":"` + linkTrace + `","span_id":"` + linkChild + `","parent_span_id":"` + linkRoot + `",` +
		`"op":"db","description":"SELECT 1","start_timestamp":1795000000.008,"timestamp":1795000000.015}]}`

	// The same spans streamed (span v2), the child in its own container
	// before its segment, which alone names the profiler.
	linkChildStreamed = `{"version":2,"items":[{"trace_id":"` + linkTrace + `","span_id":"` + linkChild + `",` +
		`"parent_span_id":"` + linkRoot + `","name":"SELECT 1","status":"ok","is_segment":false,` +
		`"start_timestamp":1795000000.008,"end_timestamp":1795000000.015,` +
		`"attributes":{"sentry.segment.id":{"type":"string","value":"` + linkRoot + `"}}}]}`
	linkSegmentStreamed = `{"version":2,"items":[{"trace_id":"` + linkTrace + `","span_id":"` + linkRoot + `",` +
		`"name":"checkout","status":"ok","is_segment":true,` +
		`"start_timestamp":1795000000.005,"end_timestamp":1795000000.030,` +
		`"attributes":{"sentry.segment.id":{"type":"string","value":"` + linkRoot + `"},` +
		`"sentry.profiler_id":{"type":"string","value":"071bfc9a1f8e4cb4a0a2e0bd1c5bde55"},` +
		`"thread.id":{"type":"string","value":"1"}}}]}`
)

func transactionItem(payload string) item {
	return item{header: `{"type":"transaction"}`, payload: payload}
}

func spanItem(payload string) item {
	return item{header: `{"type":"span","content_type":"application/vnd.sentry.items.span.v2+json","item_count":1}`, payload: payload}
}

// linksBySample maps each sample time (ms after 1795000000 s) to the span id
// it links to ("" for none).
func linksBySample(t *testing.T, sink *consumertest.ProfilesSink) map[int64]string {
	t.Helper()
	got := map[int64]string{}
	for _, pd := range sink.AllProfiles() {
		dict := pd.Dictionary()
		for _, rp := range pd.ResourceProfiles().All() {
			for _, sp := range rp.ScopeProfiles().All() {
				for _, p := range sp.Profiles().All() {
					for _, s := range p.Samples().All() {
						span := ""
						if s.LinkIndex() > 0 {
							l := dict.LinkTable().At(int(s.LinkIndex()))
							assert.Equal(t, linkTrace, l.TraceID().String())
							span = l.SpanID().String()
						}
						for _, ts := range s.TimestampsUnixNano().All() {
							got[(int64(ts)-1_795_000_000_000_000_000)/1_000_000] = span
						}
					}
				}
			}
		}
	}
	return got
}

var wantLinks = map[int64]string{0: "", 10: linkChild, 20: linkRoot}

// linkProfilerID is the profiler of chunkPayload and linkTransaction.
const linkProfilerID = "071bfc9a1f8e4cb4a0a2e0bd1c5bde55"

// The forms in which SDKs name the profiler on a transaction, each made
// from linkTransaction.
var (
	// sentry-python 2.6.0: contexts.profile["profiler.id"].
	linkTransactionDottedKey = strings.Replace(linkTransaction, `"profile":{"profiler_id":`, `"profile":{"profiler.id":`, 1)
	// sentry-python 3.0: no contexts.profile; contexts.trace.data and
	// every span's data name it.
	linkTransactionTraceData = strings.NewReplacer(
		`,"profile":{"profiler_id":"`+linkProfilerID+`"}`, ``,
		`"thread.name":"MainThread"`, `"thread.name":"MainThread","profiler_id":"`+linkProfilerID+`"`,
		`"description":"SELECT 1"`, `"description":"SELECT 1","data":{"profiler_id":"`+linkProfilerID+`"}`,
	).Replace(linkTransaction)
	// sentry-python 3.0, a root started before the profiler: only the
	// child, which ran while it did, names it.
	linkTransactionChildOnly = strings.NewReplacer(
		`,"profile":{"profiler_id":"`+linkProfilerID+`"}`, ``,
		`"description":"SELECT 1"`, `"description":"SELECT 1","data":{"profiler_id":"`+linkProfilerID+`","thread.id":"1"}`,
	).Replace(linkTransaction)
)

func TestChunkLinks(t *testing.T) {
	const wait = 300 * time.Millisecond
	tests := []struct {
		name      string
		wait      time.Duration
		envelopes [][]item // posted in this order
		want      map[int64]string
	}{
		{"transaction before the chunk, no wait", 0, [][]item{
			{transactionItem(linkTransaction)}, {chunkItem(chunkPayload)},
		}, nil},
		{"chunk before its transaction, held", wait, [][]item{
			{chunkItem(chunkPayload)}, {transactionItem(linkTransaction)},
		}, nil},
		{"transaction and chunk in one envelope", wait, [][]item{
			{chunkItem(chunkPayload), transactionItem(linkTransaction)},
		}, nil},
		{"streamed child, then the chunk, then the segment", wait, [][]item{
			{spanItem(linkChildStreamed)}, {chunkItem(chunkPayload)}, {spanItem(linkSegmentStreamed)},
		}, nil},
		{"streamed segment and child before the chunk, no wait", 0, [][]item{
			{spanItem(linkSegmentStreamed)}, {spanItem(linkChildStreamed)}, {chunkItem(chunkPayload)},
		}, nil},
		{"profiler named contexts.profile[profiler.id]", wait, [][]item{
			{chunkItem(chunkPayload)}, {transactionItem(linkTransactionDottedKey)},
		}, nil},
		{"profiler named in contexts.trace.data and span data", wait, [][]item{
			{chunkItem(chunkPayload)}, {transactionItem(linkTransactionTraceData)},
		}, nil},
		{"profiler named by the child span alone", 0, [][]item{
			{transactionItem(linkTransactionChildOnly)}, {chunkItem(chunkPayload)},
		}, map[int64]string{0: "", 10: linkChild, 20: ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, func(c *Config) { c.Links.Wait = tt.wait })
			for _, items := range tt.envelopes {
				resp := post(t, tr, envelopeOf(eventHeader, items...), nil)
				require.Equal(t, http.StatusOK, resp.status, resp.body)
			}
			if tt.wait > 0 {
				assert.Zero(t, sampleEvents(sink), "held for links::wait")
				require.Eventually(t, func() bool { return sampleEvents(sink) == chunkSamples }, 10*tt.wait, 10*time.Millisecond)
			}
			require.Equal(t, chunkSamples, sampleEvents(sink))
			want := tt.want
			if want == nil {
				want = wantLinks
			}
			assert.Equal(t, want, linksBySample(t, sink))

			linked := int64(0)
			for _, span := range want {
				if span != "" {
					linked++
				}
			}
			metadatatest.AssertEqualReceiverSentryprofileLinkedSamples(t, tr.telemetry, []metricdata.DataPoint[int64]{
				{Attributes: attribute.NewSet(attribute.Bool("linked", true)), Value: linked},
				{Attributes: attribute.NewSet(attribute.Bool("linked", false)), Value: int64(len(want)) - linked},
			}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
}

// TestChunkLinksHoldFull: with the hold full, a chunk is translated at once
// with the spans known then, and counted.
func TestChunkLinksHoldFull(t *testing.T) {
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, func(c *Config) {
		c.Links.Wait = time.Minute
		c.Links.MaxHeldChunks = 1
	})
	for range 2 {
		resp := post(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
	}
	assert.Equal(t, chunkSamples, sampleEvents(sink), "the second chunk went at once")
	metadatatest.AssertEqualReceiverSentryprofileLinkHeldChunks(t, tr.telemetry, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("hold", "held")), Value: 1},
		{Attributes: attribute.NewSet(attribute.String("hold", "full")), Value: 1},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	require.NoError(t, tr.rcvr.Shutdown(context.Background()))
	assert.Equal(t, 2*chunkSamples, sampleEvents(sink), "Shutdown released the held chunk")
}

// TestChunkLinksDisabled: links::enabled false neither holds nor links.
func TestChunkLinksDisabled(t *testing.T) {
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, func(c *Config) {
		c.Links.Enabled = false
		c.Links.Wait = time.Minute
	})
	for _, it := range []item{transactionItem(linkTransaction), chunkItem(chunkPayload)} {
		resp := post(t, tr, envelopeOf(eventHeader, it), nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
	}
	require.Equal(t, chunkSamples, sampleEvents(sink))
	assert.Equal(t, map[int64]string{0: "", 10: "", 20: ""}, linksBySample(t, sink))
}

// TestChunkLinksHeldRefused: a held chunk the pipeline refuses is counted
// as refused samples (the SDK was answered long before).
func TestChunkLinksHeldRefused(t *testing.T) {
	tr := startReceiver(t, consumertest.NewErr(errors.New("memory limiter")), func(c *Config) { c.Links.Wait = 50 * time.Millisecond })
	resp := post(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Eventually(t, func() bool {
		m, err := tr.telemetry.GetMetric("otelcol_receiver_refused_profile_samples")
		if err != nil {
			return false
		}
		sum, ok := m.Data.(metricdata.Sum[int64])
		return ok && len(sum.DataPoints) == 1 && sum.DataPoints[0].Value == chunkSamples
	}, 5*time.Second, 10*time.Millisecond)
}

// TestChunkLinksShutdownDeadline: a held chunk that cannot be translated
// before the shutdown deadline is counted as discarded, with its reason.
func TestChunkLinksShutdownDeadline(t *testing.T) {
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, func(c *Config) {
		c.Links.Wait = time.Minute
		c.MaxConcurrentEnvelopes = 1
	})
	resp := post(t, tr, envelopeOf(eventHeader, chunkItem(chunkPayload)), nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	tr.rcvr.handler.slots <- struct{}{} // every slot busy until the deadline
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = tr.rcvr.Shutdown(ctx)
	<-tr.rcvr.handler.slots

	assert.Zero(t, sampleEvents(sink))
	metadatatest.AssertEqualReceiverSentryprofileDiscardedItems(t, tr.telemetry, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("reason", "held_chunk_shutdown_deadline")), Value: 1},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

package sentryprofileexporter

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// TestLongRateLimitsHoldNotDrop: Sentry rate limits the project for much
// longer than retry_on_failure::max_elapsed_time, by a 429 or by
// X-Sentry-Rate-Limits on a 200, then lifts the limit. Every request is
// held until then and delivered once; nothing is dropped.
func TestLongRateLimitsHoldNotDrop(t *testing.T) {
	const limit = 1500 * time.Millisecond
	tests := []struct {
		name  string
		first reply
		// acceptedFirst: the first request's envelope was accepted (a
		// limit announced on a 200 holds back the next ones).
		acceptedFirst bool
	}{
		{"429 Retry-After", reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"2"}}}, false},
		{"429 X-Sentry-Rate-Limits", reply{status: http.StatusTooManyRequests, header: http.Header{
			"X-Sentry-Rate-Limits": {"2::organization:usage_exceeded"}}}, false},
		{"200 X-Sentry-Rate-Limits", reply{status: http.StatusOK, header: http.Header{
			"X-Sentry-Rate-Limits": {"2::organization:usage_exceeded"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Sentry answers 429 until the limit ends, then accepts.
			var (
				mu    sync.Mutex
				until time.Time
			)
			relay := newFakeRelay(t, func(n int) reply {
				mu.Lock()
				defer mu.Unlock()
				if n == 1 {
					until = time.Now().Add(limit)
					return tt.first
				}
				if time.Now().Before(until) {
					return reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"1"}}}
				}
				return reply{status: http.StatusOK}
			})
			cfg := newTestConfig(relay.dsn())
			cfg.RetryConfig.MaxElapsedTime = 300 * time.Millisecond // far shorter than the limit
			exp := startExporter(t, cfg, nil)

			require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("first")))
			require.Eventually(t, func() bool { return len(relay.requestTimes()) == 1 }, testTimeout, 5*time.Millisecond)
			require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("second")))
			relay.waitDelivered(t, 2)
			require.NoError(t, exp.Shutdown(context.Background()))

			times := relay.requestTimes()
			for i, env := range relay.envelopes() {
				if i == 0 && tt.acceptedFirst {
					continue
				}
				assert.GreaterOrEqual(t, env.at.Sub(times[0]), limit, "an envelope was accepted inside the limit")
			}
			// The first request, at most one try of the second that raced
			// the first answer, then one delivery per request.
			assert.LessOrEqual(t, len(times), 4)
			assert.Equal(t, map[string]int{"first": 1, "second": 1}, deliveredMarks(relay))
			assert.Equal(t, int64(2), counter(t, exp.telemetry, "chunks_sent", ""))
			assert.Equal(t, int64(0), counter(t, exp.telemetry, "chunks_dropped", ""))
			assert.Zero(t, exp.logs.FilterMessageSnippet("Exporting failed. Dropping data.").Len())
		})
	}
}

// TestRetriesExhaustedAreCounted: a Sentry that keeps failing for longer
// than max_elapsed_time gets the request dropped, counted with its reason.
func TestRetriesExhaustedAreCounted(t *testing.T) {
	relay := newFakeRelay(t, func(int) reply { return reply{status: http.StatusServiceUnavailable} })
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.MaxElapsedTime = 200 * time.Millisecond
	exp := startExporter(t, cfg, nil)

	start := time.Now()
	err := exp.ConsumeProfiles(context.Background(), markedProfiles("svc"))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.GreaterOrEqual(t, time.Since(start), cfg.RetryConfig.MaxElapsedTime)
	assert.Less(t, time.Since(start), testTimeout)
	assert.Equal(t, int64(1), counter(t, exp.telemetry, "chunks_dropped", reasonRetriesExhausted))
	assert.Equal(t, int64(3), counter(t, exp.telemetry, "samples_dropped", reasonRetriesExhausted))
	assert.Equal(t, 1, exp.logs.FilterMessageSnippet("max_elapsed_time; dropping profile chunks").Len())
}

// TestManyResourcesShareEnvelopes: a request of a thousand resources (a
// few hundred KiB) is a handful of POSTs, each within Relay's limits, not
// a thousand.
func TestManyResourcesShareEnvelopes(t *testing.T) {
	relay := newFakeRelay(t, nil)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	services := make([]string, 1000)
	for i := range services {
		services[i] = fmt.Sprintf("s%04d", i)
	}
	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles(services...)))

	marks := deliveredMarks(relay)
	assert.Len(t, marks, len(services))
	for _, n := range marks {
		assert.Equal(t, 1, n)
	}
	assert.LessOrEqual(t, len(relay.requestTimes()), len(services)/maxEnvelopeChunks)
	for _, env := range relay.envelopes() {
		assert.LessOrEqual(t, len(env.chunks), maxEnvelopeChunks)
	}
	assert.Equal(t, int64(len(services)), counter(t, exp.telemetry, "chunks_sent", ""))
}

// TestPartialFailureOfASharedEnvelope: one envelope of several resources
// fails, another is accepted: only the resources of the failed one are
// sent again.
func TestPartialFailureOfASharedEnvelope(t *testing.T) {
	var mu sync.Mutex
	failed := false
	relay := newFakeRelay(t, func(n int) reply {
		mu.Lock()
		defer mu.Unlock()
		if n == 2 && !failed {
			failed = true
			return reply{status: http.StatusBadGateway}
		}
		return reply{status: http.StatusOK}
	})
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	services := make([]string, 2*maxEnvelopeChunks)
	for i := range services {
		services[i] = fmt.Sprintf("s%04d", i)
	}
	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles(services...)))
	marks := deliveredMarks(relay)
	assert.Len(t, marks, len(services))
	for svc, n := range marks {
		assert.Equal(t, 1, n, svc)
	}
	assert.Len(t, relay.requestTimes(), 3, "two envelopes, the failed one once more")
}

// TestHugeFunctionNameIsCut: a 10 MiB function name reaches Sentry cut to
// Relay's 256 characters.
func TestHugeFunctionNameIsCut(t *testing.T) {
	relay := newFakeRelay(t, nil)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	s := newSynth()
	start := time.Now().Add(-2 * time.Second).Truncate(time.Millisecond)
	p := s.profile(s.resource("svc"), "samples", "count", start, time.Second, 1)
	leaf := s.symbolized(strings.Repeat("x", 10<<20), "huge.go", 1)
	timedSample(p, s.stack(leaf, s.symbolized("main", "main.go", 1)), start, start.Add(10*time.Millisecond))
	require.NoError(t, exp.ConsumeProfiles(context.Background(), s.pd))

	chunks := relay.chunks()
	require.Len(t, chunks, 1)
	for _, f := range chunks[0].Frames {
		assert.LessOrEqual(t, len(f.Function), 256)
	}
	assert.Less(t, counter(t, exp.telemetry, "sent_bytes", ""), int64(64<<10))
}

// TestFailingProjectBesideRateLimitedOne: one request routed to two
// projects, one failing for good, one rate limited for longer than
// max_elapsed_time. The failing one is dropped and counted when its time
// is up; the limited one is not dropped with it, and arrives once its
// limit ends.
func TestFailingProjectBesideRateLimitedOne(t *testing.T) {
	const limit = 1500 * time.Millisecond
	failing := newFakeRelay(t, func(int) reply { return reply{status: http.StatusServiceUnavailable} })
	var (
		mu    sync.Mutex
		until time.Time
	)
	limited := newFakeRelay(t, func(n int) reply {
		mu.Lock()
		defer mu.Unlock()
		if n == 1 {
			until = time.Now().Add(limit)
		}
		if time.Now().Before(until) {
			return reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"2"}}}
		}
		return reply{status: http.StatusOK}
	})
	cfg := newTestConfig(failing.dsn())
	cfg.Routing.DSNs = map[string]configopaque.String{"limited": configopaque.String(limited.dsn())}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.MaxElapsedTime = 300 * time.Millisecond
	exp := startExporter(t, cfg, nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("failing", "limited")))

	assert.Equal(t, map[string]int{"limited": 1}, deliveredMarks(limited))
	assert.Empty(t, failing.envelopes())
	assert.Equal(t, int64(1), counter(t, exp.telemetry, "chunks_dropped", reasonRetriesExhausted))
	assert.Equal(t, int64(1), counter(t, exp.telemetry, "chunks_dropped", ""), "only the failing project's chunk")
	assert.Equal(t, int64(1), counter(t, exp.telemetry, "chunks_sent", ""))
}

package sentryprofileexporter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap/zaptest/observer"
)

// markedProfiles is one resource per service, each with samples of a
// function named after the service, so that a test can tell deliveries
// apart by content.
func markedProfiles(services ...string) pprofile.Profiles {
	s := newSynth()
	start := time.Now().Add(-2 * time.Second).Truncate(time.Millisecond)
	for _, svc := range services {
		sp := s.resource(svc)
		p := s.profile(sp, "samples", "count", start, time.Second, 1)
		root := s.symbolized("main", "main.go", 1)
		leaf := s.symbolized("work_"+svc, svc+".go", 7)
		timedSample(p, s.stack(leaf, root), start, start.Add(10*time.Millisecond), start.Add(20*time.Millisecond))
	}
	return s.pd
}

// deliveredMarks counts the accepted chunks per marker function.
func deliveredMarks(r *fakeRelay) map[string]int {
	marks := map[string]int{}
	for _, c := range r.chunks() {
		seen := map[string]bool{}
		for _, f := range c.Frames {
			if strings.HasPrefix(f.Function, "work_") && !seen[f.Function] {
				seen[f.Function] = true
				marks[strings.TrimPrefix(f.Function, "work_")]++
			}
		}
	}
	return marks
}

func waitForLog(t *testing.T, logs *observer.ObservedLogs, snippet string) {
	t.Helper()
	require.Eventually(t, func() bool { return logs.FilterMessageSnippet(snippet).Len() > 0 },
		testTimeout, 5*time.Millisecond, "no log line containing %q", snippet)
}

// counter sums a counter of this exporter, over the data points whose
// `reason` is the given one (any reason when empty).
func counter(t *testing.T, tel *componenttest.Telemetry, name, reason string) int64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol_exporter_sentryprofile_" + name)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int64 sum", name)
	var total int64
	for _, dp := range sum.DataPoints {
		if reason != "" {
			if v, ok := dp.Attributes.Value(attribute.Key("reason")); !ok || v.AsString() != reason {
				continue
			}
		}
		total += dp.Value
	}
	return total
}

// assertNoSecret checks that the DSN secret appears in no log line, no log
// field and no error.
func assertNoSecret(t *testing.T, logs *observer.ObservedLogs, errs ...error) {
	t.Helper()
	for _, e := range logs.All() {
		line := e.Message + " " + fmt.Sprint(e.ContextMap())
		assert.NotContains(t, line, testSecretKey, "secret in log line")
		assert.NotContains(t, line, testPublicKey+":", "DSN user info in log line")
	}
	for _, err := range errs {
		if err != nil {
			assert.NotContains(t, err.Error(), testSecretKey, "secret in error")
		}
	}
}

func TestRateLimitHeaderHoldsBackTheCategory(t *testing.T) {
	const window = time.Second
	var (
		mu        sync.Mutex
		windowEnd time.Time
	)
	relay := newFakeRelay(t, func(n int) reply {
		mu.Lock()
		defer mu.Unlock()
		if n == 1 {
			windowEnd = time.Now().Add(window)
		}
		if time.Now().Before(windowEnd) {
			return reply{status: http.StatusTooManyRequests, header: http.Header{
				"X-Sentry-Rate-Limits": {fmt.Sprintf("%d:profile_chunk:key:quota_exceeded", int(window.Seconds()))},
			}}
		}
		return reply{status: http.StatusOK}
	})
	exp := startExporter(t, newTestConfig(relay.dsn()), nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("first")))
	waitForLog(t, exp.logs, "Will retry")
	// The limit is known now: a second request must wait without being sent.
	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("second")))
	relay.waitDelivered(t, 2)

	times := relay.requestTimes()
	require.Len(t, times, 3, "one 429, then one delivery per request")
	for _, at := range times[1:] {
		assert.False(t, at.Before(times[0].Add(window)), "a request went out %s after the 429, inside the %s window", at.Sub(times[0]), window)
	}
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Equal(t, map[string]int{"first": 1, "second": 1}, deliveredMarks(relay))
	assert.Equal(t, int64(2), counter(t, exp.telemetry, "chunks_sent", ""))
	assertNoSecret(t, exp.logs)
}

func TestRateLimitRetryAfterOnly(t *testing.T) {
	relay := newFakeRelay(t, func(n int) reply {
		if n == 1 {
			return reply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"1"}}}
		}
		return reply{status: http.StatusOK}
	})
	exp := startExporter(t, newTestConfig(relay.dsn()), nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("only")))
	relay.waitDelivered(t, 1)

	times := relay.requestTimes()
	require.Len(t, times, 2)
	assert.GreaterOrEqual(t, times[1].Sub(times[0]), time.Second, "Retry-After was not honoured")
	assert.Equal(t, map[string]int{"only": 1}, deliveredMarks(relay))
}

func TestServiceUnavailableThenDeliveredOnce(t *testing.T) {
	relay := newFakeRelay(t, func(n int) reply {
		if n == 1 {
			return reply{status: http.StatusServiceUnavailable, body: "try later"}
		}
		return reply{status: http.StatusOK}
	})
	exp := startExporter(t, newTestConfig(relay.dsn()), nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("svc")))
	relay.waitDelivered(t, 1)
	require.NoError(t, exp.Shutdown(context.Background()))

	assert.Len(t, relay.requestTimes(), 2)
	assert.Equal(t, map[string]int{"svc": 1}, deliveredMarks(relay))
	assertNoSecret(t, exp.logs)
}

func TestBadRequestIsDroppedAndLogged(t *testing.T) {
	relay := newFakeRelay(t, func(int) reply {
		return reply{status: http.StatusBadRequest, body: `{"detail":"invalid profile chunk"}`}
	})
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	err := exp.ConsumeProfiles(context.Background(), markedProfiles("svc"))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "400 must not be retried: %v", err)
	assert.Contains(t, err.Error(), "HTTP 400")
	assert.Contains(t, err.Error(), "invalid profile chunk", "the response body belongs in the error")

	rejected := exp.logs.FilterMessageSnippet("Sentry rejected profile chunks")
	require.Equal(t, 1, rejected.Len())
	assert.Contains(t, fmt.Sprint(rejected.All()[0].ContextMap()["error"]), "invalid profile chunk")
	assert.Len(t, relay.requestTimes(), 1, "a permanent error is not retried")
	assert.Equal(t, int64(1), counter(t, exp.telemetry, "chunks_dropped", reasonRejected))
	assert.Equal(t, int64(0), counter(t, exp.telemetry, "chunks_sent", ""))
	assertNoSecret(t, exp.logs, err)
}

// TestErrorBodyIsRedacted answers like a proxy that echoes the request's
// X-Sentry-Auth in its error page: the key must not reach the error or logs.
func TestErrorBodyIsRedacted(t *testing.T) {
	relay := newFakeRelay(t, func(int) reply {
		return reply{status: http.StatusBadGateway, body: "upstream failed for sentry_key=" + testPublicKey + " secret " + testSecretKey}
	})
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.Enabled = false
	exp := startExporter(t, cfg, nil)

	err := exp.ConsumeProfiles(context.Background(), markedProfiles("svc"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "upstream failed for sentry_key=[redacted]", "the rest of the body stays readable")
	assert.NotContains(t, err.Error(), testPublicKey)
	assertNoSecret(t, exp.logs, err)
	for _, e := range exp.logs.All() {
		assert.NotContains(t, e.Message+" "+fmt.Sprint(e.ContextMap()), testPublicKey, "public key in a log line")
	}
}

func TestPermanentStatuses(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusNotFound} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			relay := newFakeRelay(t, func(int) reply { return reply{status: status} })
			cfg := newTestConfig(relay.dsn())
			cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
			exp := startExporter(t, cfg, nil)
			err := exp.ConsumeProfiles(context.Background(), markedProfiles("svc"))
			require.Error(t, err)
			assert.True(t, consumererror.IsPermanent(err))
			assert.Contains(t, err.Error(), fmt.Sprintf("HTTP %d", status))
			assert.Len(t, relay.requestTimes(), 1)
		})
	}
}

func TestServerDownIsQueuedAndDeliveredLater(t *testing.T) {
	relay := newUnstartedFakeRelay(t, nil)
	addr := relay.srv.Listener.Addr().String()
	// The listener is reserved but closed: connections are refused.
	require.NoError(t, relay.srv.Listener.Close())
	exp := startExporter(t, newTestConfig(relay.dsn()), nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("svc")))
	waitForLog(t, exp.logs, "Will retry")
	assert.Empty(t, relay.requestTimes())

	require.NoError(t, relay.listenOn(addr))
	relay.waitDelivered(t, 1)
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Equal(t, map[string]int{"svc": 1}, deliveredMarks(relay))
	assertNoSecret(t, exp.logs)
}

// TestPartialFailureResendsOnlyTheFailedResource routes two resources to two
// projects; one project fails at first. The retry must carry only the failed
// resource, or the other project would get its chunk twice.
func TestPartialFailureResendsOnlyTheFailedResource(t *testing.T) {
	healthy := newFakeRelay(t, nil)
	flaky := newFakeRelay(t, func(n int) reply {
		if n <= 2 {
			return reply{status: http.StatusBadGateway}
		}
		return reply{status: http.StatusOK}
	})
	cfg := newTestConfig(healthy.dsn())
	cfg.Routing.DSNs = map[string]configopaque.String{"flaky": configopaque.String(flaky.dsn())}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("healthy", "flaky")))

	assert.Equal(t, map[string]int{"healthy": 1}, deliveredMarks(healthy))
	assert.Equal(t, map[string]int{"flaky": 1}, deliveredMarks(flaky))
	assert.Len(t, healthy.requestTimes(), 1, "the healthy project was sent to again")
	assert.Len(t, flaky.requestTimes(), 3)
}

func TestNoDSNForResourceIsDropped(t *testing.T) {
	relay := newFakeRelay(t, nil)
	cfg := newTestConfig("")
	cfg.Routing.DSNs = map[string]configopaque.String{"routed": configopaque.String(relay.dsn())}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("routed", "unrouted")))
	assert.Equal(t, map[string]int{"routed": 1}, deliveredMarks(relay))
	assert.Equal(t, int64(1), counter(t, exp.telemetry, "chunks_dropped", reasonNoDSN))
	assert.Equal(t, 1, exp.logs.FilterMessageSnippet("No DSN for resource").Len())
}

func TestSentMetrics(t *testing.T) {
	relay := newFakeRelay(t, nil)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	require.NoError(t, exp.ConsumeProfiles(context.Background(), markedProfiles("a", "b")))
	chunks := relay.chunks()
	require.Len(t, chunks, 2)
	assert.Equal(t, int64(2), counter(t, exp.telemetry, "chunks_sent", ""))
	assert.Positive(t, counter(t, exp.telemetry, "sent_bytes", ""))
}

// TestRedirectsAreNotFollowed: Sentry (or a proxy in front of it) answering
// a redirect to another host must not make the exporter send the envelope,
// or its X-Sentry-Auth, there, nor count a GET's 200 from there as a
// delivery. A permanent redirect drops the chunks as `redirected`; a
// temporary one is a retryable failure.
func TestRedirectsAreNotFollowed(t *testing.T) {
	tests := []struct {
		status    int
		permanent bool
	}{
		{http.StatusMovedPermanently, true},
		{http.StatusFound, false},
		{http.StatusSeeOther, false},
		{http.StatusTemporaryRedirect, false},
		{http.StatusPermanentRedirect, true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			var (
				mu    sync.Mutex
				other []string // what the other host got: method and X-Sentry-Auth
			)
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				other = append(other, r.Method+" "+r.Header.Get("X-Sentry-Auth"))
				mu.Unlock()
				w.WriteHeader(http.StatusOK)
			}))
			t.Cleanup(elsewhere.Close)
			relay := newFakeRelay(t, func(int) reply {
				return reply{status: tt.status, header: http.Header{"Location": {elsewhere.URL + "/api/42/envelope/?sentry_key=" + testPublicKey}}}
			})
			cfg := newTestConfig(relay.dsn())
			cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
			cfg.RetryConfig.Enabled = false
			exp := startExporter(t, cfg, nil)

			err := exp.ConsumeProfiles(context.Background(), markedProfiles("svc"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("HTTP %d redirect", tt.status))
			assert.NotContains(t, err.Error(), testPublicKey, "the Location's query is not quoted")
			assert.Equal(t, tt.permanent, consumererror.IsPermanent(err), "%v", err)

			mu.Lock()
			assert.Empty(t, other, "the redirect was followed")
			mu.Unlock()
			assert.Len(t, relay.requestTimes(), 1)
			assert.Equal(t, int64(0), counter(t, exp.telemetry, "chunks_sent", ""))
			wantDropped := int64(0)
			if tt.permanent {
				wantDropped = 1
			}
			assert.Equal(t, wantDropped, counter(t, exp.telemetry, "chunks_dropped", reasonRedirected))
			assertNoSecret(t, exp.logs, err)
		})
	}
}

package sentryprofileexporter

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
)

// storageHost is a host that offers one storage extension.
type storageHost map[component.ID]component.Component

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h }

// startFileStorage starts a file_storage extension on dir; it is shut down
// by the caller, because the test restarts it.
func startFileStorage(t *testing.T, dir string) (component.ID, extension.Extension) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	id := component.NewID(f.Type())
	ext, err := f.Create(context.Background(), extension.Settings{
		ID:                id,
		TelemetrySettings: componenttest.NewNopTelemetrySettings(),
		BuildInfo:         component.NewDefaultBuildInfo(),
	}, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	return id, ext
}

// TestFileQueueSurvivesRestart stops an exporter while Sentry refuses
// everything, starts a new one on the same storage directory, and expects
// every request to arrive exactly once.
func TestFileQueueSurvivesRestart(t *testing.T) {
	var accepting atomic.Bool
	relay := newFakeRelay(t, func(int) reply {
		if accepting.Load() {
			return reply{status: http.StatusOK}
		}
		return reply{status: http.StatusServiceUnavailable}
	})
	dir := t.TempDir()
	services := []string{"r0", "r1", "r2"}

	// First life: everything is refused and stays queued.
	id, storage := startFileStorage(t, dir)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig.Get().StorageID = &id
	first := startExporter(t, cfg, storageHost{id: storage})
	for _, svc := range services {
		require.NoError(t, first.ConsumeProfiles(context.Background(), markedProfiles(svc)))
	}
	require.Eventually(t, func() bool { return len(relay.requestTimes()) >= len(services) },
		testTimeout, 5*time.Millisecond, "every request should have been tried once")
	require.NoError(t, first.Shutdown(context.Background()))
	require.NoError(t, storage.Shutdown(context.Background()))
	assert.Empty(t, relay.envelopes())

	// Second life: Sentry is back; the queue is read from disk.
	accepting.Store(true)
	id, storage = startFileStorage(t, dir)
	defer func() { require.NoError(t, storage.Shutdown(context.Background())) }()
	second := startExporter(t, cfg, storageHost{id: storage})
	relay.waitDelivered(t, len(services))
	require.NoError(t, second.Shutdown(context.Background()))

	assert.Equal(t, map[string]int{"r0": 1, "r1": 1, "r2": 1}, deliveredMarks(relay))
}

// TestFileQueueHoldsRateLimitedRequests: Sentry rate limits the project
// for an hour (far past max_elapsed_time); the exporter stops without
// waiting for the limit and without dropping, and the next run, once
// Sentry accepts again, delivers every request exactly once.
func TestFileQueueHoldsRateLimitedRequests(t *testing.T) {
	var accepting atomic.Bool
	relay := newFakeRelay(t, func(int) reply {
		if accepting.Load() {
			return reply{status: http.StatusOK}
		}
		return reply{status: http.StatusTooManyRequests, header: http.Header{"X-Sentry-Rate-Limits": {"3600::organization:usage_exceeded"}}}
	})
	dir := t.TempDir()
	services := []string{"r0", "r1", "r2"}

	id, storage := startFileStorage(t, dir)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig.Get().StorageID = &id
	cfg.RetryConfig.MaxElapsedTime = 100 * time.Millisecond
	first := startExporter(t, cfg, storageHost{id: storage})
	for _, svc := range services {
		require.NoError(t, first.ConsumeProfiles(context.Background(), markedProfiles(svc)))
	}
	require.Eventually(t, func() bool { return len(relay.requestTimes()) >= 1 },
		testTimeout, 5*time.Millisecond, "the first request should have met the limit")
	time.Sleep(4 * cfg.RetryConfig.MaxElapsedTime) // past max_elapsed_time
	stopped := time.Now()
	require.NoError(t, first.Shutdown(context.Background()))
	assert.Less(t, time.Since(stopped), testTimeout/2, "shutdown waited for the rate limit")
	require.NoError(t, storage.Shutdown(context.Background()))
	// Requests in flight before the first 429 came back met the limit
	// too; none is tried again while it lasts.
	assert.LessOrEqual(t, len(relay.requestTimes()), len(services), "a request was sent again inside the limit")
	assert.Equal(t, int64(0), counter(t, first.telemetry, "chunks_dropped", ""))

	accepting.Store(true)
	id, storage = startFileStorage(t, dir)
	defer func() { require.NoError(t, storage.Shutdown(context.Background())) }()
	second := startExporter(t, cfg, storageHost{id: storage})
	relay.waitDelivered(t, len(services))
	require.NoError(t, second.Shutdown(context.Background()))

	assert.Equal(t, map[string]int{"r0": 1, "r1": 1, "r2": 1}, deliveredMarks(relay))
	assert.Equal(t, int64(0), counter(t, second.telemetry, "chunks_dropped", ""))
}

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/loadgen"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// sentryRelayConfig is a collector that takes envelopes in with the
// sentryprofile receiver and sends them on with the sentryprofile exporter
// through a file-backed queue. No batch processor and no links::wait: a 200
// from the receiver then means the data is in the queue on disk.
func sentryRelayConfig(receiverAddr, sentryAddr, storageDir string) string {
	return fmt.Sprintf(`extensions:
  file_storage:
    directory: %s
receivers:
  sentryprofile:
    endpoint: %s
    public_keys: [%s]
    projects: [%s]
    # A 200 means on disk only if chunks are not held for their spans.
    links:
      wait: 0s
exporters:
  sentryprofile:
    dsn: %s
    timeout: 10s
    sending_queue:
      storage: file_storage
      queue_size: 100000
      num_consumers: 2
      # Each request sent as it arrives: these tests time the exporter's
      # first attempts, which the default 50 s batch would hold back.
      batch:
        enabled: false
    retry_on_failure:
      enabled: true
      initial_interval: 100ms
      max_interval: 1s
      max_elapsed_time: 0s
service:
  extensions: [file_storage]
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [sentryprofile]
`, yamlQuote(storageDir), yamlQuote(receiverAddr), yamlQuote(testKey), yamlQuote(testProject),
		yamlQuote("http://"+exportKey+"@"+sentryAddr+"/7"))
}

// exportKey is the key of the DSN the exporter delivers to.
const exportKey = "0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e"

// sendUnique posts n envelopes whose chunk ids no other call uses (seeds
// from base) and returns the chunk ids the receiver accepted.
func sendUnique(t *testing.T, addr string, base uint64, workers int, d time.Duration, n int) []string {
	t.Helper()
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL:         envelopeURL("http://" + addr),
		Workers:     workers,
		Duration:    d,
		MaxRequests: n,
		Source:      loadgen.UniqueChunkSource(benchdata.SmallChunkConfig(), base),
	})
	require.NoError(t, err)
	t.Logf("sent from seed %d: %s", base, res)
	require.Zero(t, res.Errors, "transport errors: %v", res.LastError)
	require.Equal(t, res.Requests, res.Status[http.StatusOK], "the receiver queues everything while Sentry misbehaves")
	return res.ChunkIDs
}

// requireExactlyOnce waits until Sentry accepted every id and checks that
// it accepted each exactly once and nothing else.
func requireExactlyOnce(t *testing.T, sentry *fakeSentry, want []string, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	ok := waitFor(timeout, func() bool {
		got, _, _ := sentry.snapshot()
		for _, id := range want {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(2 * time.Second) // room for a duplicate to show
	got, answers, errs := sentry.snapshot()
	t.Logf("Sentry accepted %d distinct chunks in %s; answers by status %v", len(got), time.Since(start).Round(time.Second), answers)
	require.Empty(t, errs, "fake Sentry could not read what it was sent")
	require.True(t, ok, "not every accepted chunk reached Sentry within %s", timeout)

	wanted := make(map[string]bool, len(want))
	for _, id := range want {
		wanted[id] = true
	}
	var dups, unknown []string
	for id, n := range got {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%s×%d", id, n))
		}
		if !wanted[id] {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(dups)
	assert.Empty(t, dups, "chunks delivered more than once")
	assert.Empty(t, unknown, "chunks Sentry got that the receiver never accepted")
	assert.Len(t, got, len(wanted))
}

// TestExporterFaultsExactlyOnce sends envelopes through the collector while
// Sentry is down, slow, rate limiting and failing, then lets it recover:
// every chunk arrives, once.
func TestExporterFaultsExactlyOnce(t *testing.T) {
	bin := requireLoad(t)
	sentry := startFakeSentry(t)
	dir := t.TempDir()
	storage := filepath.Join(dir, "queue")
	require.NoError(t, os.MkdirAll(storage, 0o700))
	addr := testnet.FreeLoopbackAddr(t)
	c := startCollector(t, bin, dir, sentryRelayConfig(addr, sentry.addr, storage))
	c.waitListening(t, addr)

	var accepted []string
	for i, mode := range []sentryMode{sentryDown, sentrySlow, sentry429, sentry500, sentryDown, sentry429} {
		sentry.setMode(t, mode)
		ids := sendUnique(t, addr, uint64(i+1)*1_000_000, 1, 3*time.Second, 100_000)
		t.Logf("phase %d (%s): %d envelopes accepted", i, mode, len(ids))
		accepted = append(accepted, ids...)
	}
	sentry.setMode(t, sentryAccept)
	requireExactlyOnce(t, sentry, accepted, 120*time.Second)
	_, answers, _ := sentry.snapshot()
	assert.Positive(t, answers[http.StatusTooManyRequests], "the 429 storm was seen")
	assert.Positive(t, answers[http.StatusInternalServerError], "the 500s were seen")
	assert.False(t, c.exited())
}

// TestExporterSIGKILLExactlyOnce kills the collector with SIGKILL while its
// file-backed queue holds chunks Sentry refused (503), restarts it on the
// same storage directory, and lets Sentry accept: every chunk arrives once.
func TestExporterSIGKILLExactlyOnce(t *testing.T) {
	bin := requireLoad(t)
	sentry := startFakeSentry(t)
	sentry.setMode(t, sentry503)
	dir := t.TempDir()
	storage := filepath.Join(dir, "queue")
	require.NoError(t, os.MkdirAll(storage, 0o700))

	addr := testnet.FreeLoopbackAddr(t)
	first := startCollector(t, bin, dir, sentryRelayConfig(addr, sentry.addr, storage))
	first.waitListening(t, addr)
	accepted := sendUnique(t, addr, 9_000_000, 4, time.Minute, 200)
	require.Len(t, accepted, 200)
	// Let the exporter try (and fail) before the kill, so that the queue
	// holds both waiting and in-flight entries.
	require.True(t, waitFor(30*time.Second, func() bool {
		_, answers, _ := sentry.snapshot()
		return answers[http.StatusServiceUnavailable] >= 5
	}), "the exporter never tried to deliver")
	first.kill(t)
	got, _, _ := sentry.snapshot()
	require.Empty(t, got, "nothing was accepted before the kill")

	sentry.setMode(t, sentryAccept)
	second := startCollector(t, bin, dir, sentryRelayConfig(testnet.FreeLoopbackAddr(t), sentry.addr, storage))
	requireExactlyOnce(t, sentry, accepted, 120*time.Second)
	assert.False(t, second.exited())
}

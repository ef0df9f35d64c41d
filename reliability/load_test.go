package reliability

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/loadgen"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// pipelineConfig is a collector configuration: the sentryprofile receiver on
// receiverAddr → memory_limiter → otlp_http to the sink. The batch processor
// does not support profiles in collector v0.165.0, so batching happens in
// the exporter's sending_queue, as in the project's examples.
func pipelineConfig(receiverAddr, sinkURL string, limitMiB, spikeMiB int) string {
	return fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %s
    public_keys: [%s]
    projects: [%s]
    # Each envelope's samples reach the sink as it is answered: the test
    # compares the two.
    links:
      wait: 0s
processors:
  memory_limiter:
    check_interval: 100ms
    limit_mib: %d
    spike_limit_mib: %d
exporters:
  otlp_http:
    endpoint: %s
    compression: gzip
    sending_queue:
      queue_size: 100000
      num_consumers: 4
      batch:
        flush_timeout: 200ms
    retry_on_failure:
      enabled: true
      initial_interval: 100ms
      max_interval: 1s
      max_elapsed_time: 0s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      processors: [memory_limiter]
      exporters: [otlp_http]
`, yamlQuote(receiverAddr), yamlQuote(testKey), yamlQuote(testProject), limitMiB, spikeMiB, yamlQuote(sinkURL))
}

// TestLoadZeroLoss posts real-SDK-sized envelopes at the built collector for
// 30 s and checks that every sample the receiver accepted reached the OTLP
// sink, no more and no fewer.
func TestLoadZeroLoss(t *testing.T) {
	bin := requireLoad(t)
	sink := startOTLPSink(t, 0)
	addr := testnet.FreeLoopbackAddr(t)
	c := startCollector(t, bin, t.TempDir(), pipelineConfig(addr, sink.url, 512, 128))
	c.waitListening(t, addr)

	chunk := benchdata.SmallChunkConfig()
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL:           envelopeURL("http://" + addr),
		Workers:       8,
		Duration:      30 * time.Second,
		MaxRequests:   2_000_000,
		Source:        loadgen.ChunkSource(chunk, 64),
		RetryAfterCap: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Logf("load: %s", res)

	accepted := int64(res.Samples)
	drained := waitFor(60*time.Second, func() bool { return sink.samples.Load() >= accepted })
	// A little longer, so that a duplicate delivery would show.
	time.Sleep(time.Second)
	rss, peak, err := c.memory()
	require.NoError(t, err)
	t.Logf("collector RSS %.0f MiB now, peak %.0f MiB; sink got %d samples in %d requests",
		float64(rss)/mib, float64(peak)/mib, sink.samples.Load(), sink.requests.Load())

	assert.True(t, drained, "the sink did not get every accepted sample within 60s")
	assert.Equal(t, accepted, sink.samples.Load(), "samples accepted (200) = samples at the sink")
	assert.Zero(t, sink.failures.Load(), "undecodable OTLP requests")
	assert.Zero(t, res.Errors, "transport errors: %v", res.LastError)
	// The memory limiter may push back on a shared machine; anything but a
	// 200 or a 429 is a failure.
	assert.Equal(t, res.Requests, res.Status[http.StatusOK]+res.Status[http.StatusTooManyRequests], "answers other than 200 and 429: %v", res.Status)
	assert.Greater(t, res.Status[http.StatusOK], res.Requests/2, "most envelopes accepted")
	assert.Greater(t, res.Requests, 100, "the run sent real load")
	assert.False(t, c.exited(), "the collector is still running")
}

// TestLoadSlowDownstream makes the sink slow and the memory limit small: the
// receiver must push back with 429 rather than grow, stay under a memory
// bound, and, once the load stops, deliver everything it accepted.
func TestLoadSlowDownstream(t *testing.T) {
	bin := requireLoad(t)
	const (
		limitMiB = 100
		spikeMiB = 30
		// The Go heap is held under limit_mib; the resident set adds the
		// runtime, the binary and request bodies in flight.
		rssBound = 400 * mib
	)
	sink := startOTLPSink(t, 300*time.Millisecond)
	addr := testnet.FreeLoopbackAddr(t)
	c := startCollector(t, bin, t.TempDir(), pipelineConfig(addr, sink.url, limitMiB, spikeMiB))
	c.waitListening(t, addr)

	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL:           envelopeURL("http://" + addr),
		Workers:       8,
		Duration:      20 * time.Second,
		MaxRequests:   2_000_000,
		Source:        loadgen.ChunkSource(benchdata.SmallChunkConfig(), 64),
		RetryAfterCap: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	_, peakUnderLoad, err := c.memory()
	require.NoError(t, err)
	t.Logf("load against a slow sink: %s; collector peak RSS %.0f MiB (bound %d MiB)", res, float64(peakUnderLoad)/mib, rssBound/mib)

	accepted := int64(res.Samples)
	start := time.Now()
	drained := waitFor(120*time.Second, func() bool { return sink.samples.Load() >= accepted })
	t.Logf("drained %d of %d accepted samples in %s after the load stopped (%d sink requests)",
		sink.samples.Load(), accepted, time.Since(start).Round(time.Second), sink.requests.Load())

	assert.False(t, c.exited(), "the collector died (OOM?)")
	assert.Positive(t, res.Status[http.StatusTooManyRequests], "the receiver pushed back with 429")
	assert.Positive(t, res.Status[http.StatusOK], "the receiver accepted some envelopes")
	assert.Zero(t, res.Status[http.StatusServiceUnavailable]+res.Status[http.StatusInternalServerError], "no 5xx: back-pressure is a 429")
	assert.LessOrEqual(t, peakUnderLoad, uint64(rssBound), "peak RSS")
	assert.True(t, drained, "what was accepted arrives")
	// Requests the client gave up on may still have been accepted: they
	// can only add samples, never explain missing ones.
	assert.LessOrEqual(t, sink.samples.Load(), accepted+int64(res.Errors*benchdata.SmallChunkConfig().Samples()), "no duplicates")
	assert.Zero(t, sink.failures.Load())
}

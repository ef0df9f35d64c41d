package sentryprofileexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// ebpfFixture is the collector's file-exporter output of a 30 s run of the
// OpenTelemetry eBPF profiler on a Python, a Node and a Go program (see
// ../shared/fixtures/otlp/INDEX.md): nine requests, one per 5 s report.
const ebpfFixture = "ebpf-profiler-b442421__python-node-go-load.otlp.jsonl"

// otlpRequests decodes every request of an OTLP JSON-lines fixture; the
// test is skipped when the shared fixtures are absent.
func otlpRequests(t *testing.T, name string) []pprofile.Profiles {
	t.Helper()
	var u pprofile.JSONUnmarshaler
	var out []pprofile.Profiles
	for i, line := range fixtures.OTLPLines(t, name) {
		pd, err := u.UnmarshalProfiles(line)
		require.NoError(t, err, "%s line %d", name, i+1)
		out = append(out, pd)
	}
	return out
}

// droppedByReason is the samples_dropped counter per reason.
func droppedByReason(t *testing.T, tel *componenttest.Telemetry) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	m, err := tel.GetMetric("otelcol_exporter_sentryprofile_samples_dropped")
	if err != nil {
		return out
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok)
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key("reason"))
		out[v.AsString()] += dp.Value
	}
	return out
}

// batchedConfig is the test configuration with requests batched in the
// queue for flush (and never flushed early by size).
func batchedConfig(dsn string, flush time.Duration) *Config {
	cfg := newTestConfig(dsn)
	cfg.DefaultRelease, cfg.DefaultEnvironment = "load@1.0", "bench"
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.FlushTimeout = flush
	batch.Sizer = exporterhelper.RequestSizerTypeItems
	batch.MinSize = 1 << 30
	cfg.QueueConfig.Get().Batch = configoptional.Some(batch)
	return cfg
}

// TestEBPFProfilerThroughQueue sends the nine reports of the eBPF profiler
// fixture as the otlp receiver would, one request each, through the
// default pipeline shape (queue with batching) to the fake Relay, which
// applies Relay's rules to every chunk.
func TestEBPFProfilerThroughQueue(t *testing.T) {
	reqs := otlpRequests(t, ebpfFixture)
	in := 0
	for _, pd := range reqs {
		in += profilestest.SampleEvents(pd)
	}
	require.Equal(t, 1099, in, "the fixture's sample count (INDEX.md)")

	tests := []struct {
		name  string
		flush time.Duration
		// shutdown: the batch is still open when the exporter stops, and
		// Shutdown must send it.
		shutdown bool
		// chunksPerProfiler: the 30 s run in one batch fits one 60 s
		// window; without batching every report is its own chunk.
		maxChunksPerProfiler int
	}{
		{name: "batch flushed by its timeout", flush: 300 * time.Millisecond, maxChunksPerProfiler: 1},
		{name: "batch flushed by shutdown", flush: time.Hour, shutdown: true, maxChunksPerProfiler: 1},
		{name: "no batching", maxChunksPerProfiler: len(reqs)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			relay := newFakeRelay(t, nil)
			cfg := batchedConfig(relay.dsn(), tt.flush)
			if tt.flush == 0 {
				cfg.QueueConfig.Get().Batch = configoptional.None[exporterhelper.BatchConfig]()
			}
			exp := startExporter(t, cfg, nil)
			for _, pd := range reqs {
				cp := pprofile.NewProfiles()
				pd.CopyTo(cp)
				require.NoError(t, exp.ConsumeProfiles(context.Background(), cp))
			}
			if tt.shutdown {
				time.Sleep(100 * time.Millisecond)
				require.Empty(t, relay.envelopes(), "nothing leaves before the batch is flushed")
				require.NoError(t, exp.Shutdown(context.Background()))
			}
			sent := func() int64 { return counter(t, exp.telemetry, "samples_sent", "") }
			dropped := func() int64 {
				n := int64(0)
				for _, v := range droppedByReason(t, exp.telemetry) {
					n += v
				}
				return n
			}
			require.Eventually(t, func() bool { return sent()+dropped() == int64(in) }, testTimeout, 10*time.Millisecond,
				"samples in = samples sent + samples dropped: %d in, %d sent, %v dropped", in, sent(), droppedByReason(t, exp.telemetry))

			received := 0
			chunksOf := map[string]int{}
			platformOf := map[string]string{}
			for _, c := range relay.chunks() {
				received += len(c.Samples)
				chunksOf[c.ProfilerID]++
				if p, ok := platformOf[c.ProfilerID]; ok {
					assert.Equal(t, p, c.Platform, "one platform per profiler %s", c.ProfilerID)
				}
				platformOf[c.ProfilerID] = c.Platform
				assert.Equal(t, "load@1.0", c.Release)
				assert.Equal(t, "bench", c.Environment)
				assert.LessOrEqual(t, chunkSpanNanos(c), int64(60e9))
				requireFramesInOwnImage(t, c)
			}
			assert.Equal(t, int64(received), sent(), "samples_sent counts the samples Sentry accepted")
			for reason := range droppedByReason(t, exp.telemetry) {
				assert.Equal(t, string(sentry.ReasonNotEnoughSamples), reason, "only threads Relay would drop are dropped")
			}
			for id, n := range chunksOf {
				assert.LessOrEqual(t, n, tt.maxChunksPerProfiler, "chunks of profiler %s", id)
			}
			assert.Len(t, chunksOf, 8, "profilers of the run")
			t.Logf("%d samples: %d sent in %d chunks of %d profilers, dropped %v",
				in, sent(), len(relay.chunks()), len(chunksOf), droppedByReason(t, exp.telemetry))
		})
	}
}

// chunkSpanNanos is the time from a chunk's first sample to its last.
func chunkSpanNanos(p *sentry.Profile) int64 {
	lo, hi := p.Samples[0].Timestamp, p.Samples[0].Timestamp
	for _, s := range p.Samples {
		lo, hi = min(lo, s.Timestamp), max(hi, s.Timestamp)
	}
	return hi - lo
}

// requireFramesInOwnImage checks what a symbolicator needs of a chunk as
// Relay stores it (Relay keeps a frame's module, not its package): no two
// images overlap, and every frame with an address lies in at most one
// image.
func requireFramesInOwnImage(t *testing.T, p *sentry.Profile) {
	t.Helper()
	imgs := p.DebugMeta.Images
	for fi, f := range p.Frames {
		if f.InstructionAddr == 0 {
			continue
		}
		n := 0
		for _, img := range imgs {
			if f.InstructionAddr >= img.ImageAddr && f.InstructionAddr-img.ImageAddr < img.ImageSize {
				n++
			}
		}
		require.LessOrEqual(t, n, 1, "chunk %s frame %d at %#x lies in %d images", p.ChunkID, fi, f.InstructionAddr, n)
	}
}

package reliability

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/loadgen"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/proccpu"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// cpuTime is the CPU the process has used so far, user and system.
func (p *collectorProcess) cpuTime() (time.Duration, error) {
	return proccpu.Of(p.cmd.Process.Pid)
}

// scrapeSum adds up every series of the named metrics on a Prometheus
// endpoint; a metric never recorded reads as zero.
func scrapeSum(t *testing.T, addr string, names ...string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sums := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range names {
			if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			require.NoError(t, err, "metric line %q", line)
			sums[name] += v
		}
	}
	require.NoError(t, sc.Err())
	return sums
}

// sdkShapedConfig is the project's config.yaml, the pipeline `make run`
// starts (receiver → memory_limiter → file and debug exporters), with the
// receiver on addr, the file written to /dev/null (a load run would fill a
// disk), and the collector's own metrics on metricsAddr.
func sdkShapedConfig(t *testing.T, addr, metricsAddr, pprofAddr string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "config.yaml"))
	require.NoError(t, err)
	config := string(raw)
	for old, repl := range map[string]string{
		"endpoint: 0.0.0.0:8000":      "endpoint: " + yamlQuote(addr),
		"path: ./data/profiles.jsonl": "path: /dev/null",
	} {
		require.Contains(t, config, old, "config.yaml changed: update this test")
		config = strings.Replace(config, old, repl, 1)
	}
	host, port, _ := strings.Cut(metricsAddr, ":")
	telemetry := fmt.Sprintf(`service:
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: %q
                port: %s
`, host, port)
	if pprofAddr != "" {
		telemetry = fmt.Sprintf("extensions:\n  pprof:\n    endpoint: %q\n", pprofAddr) + telemetry + "  extensions: [pprof]\n"
	}
	require.Contains(t, config, "\nservice:\n")
	return strings.Replace(config, "\nservice:\n", "\n"+telemetry, 1)
}

// linksWait is the receiver's default links::wait, which config.yaml
// keeps: chunks are accepted that long after they were answered.
const linksWait = 5 * time.Second

// envLoadProfile names a file: with it, TestLoadRealSDKShape turns on the
// collector's pprof extension and saves a CPU profile of the collector
// taken during the measured run (`go tool pprof <binary> <file>`).
const envLoadProfile = "LOAD_CPU_PROFILE"

// saveCPUProfile fetches a CPU profile of seconds from the pprof extension.
func saveCPUProfile(pprofAddr, path string, seconds int) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, seconds))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestLoadRealSDKShape posts envelopes shaped like real @sentry/node 11
// continuous-profiling traffic (benchdata.NodeSDKChunkConfig: 135 KB of
// JSON, gzip'd, no length headers) at the built collector running the
// project's config.yaml pipeline, and reports what an operator sizes a
// machine by: envelopes per second, latency, collector CPU per envelope and
// peak memory. Every sample answered 200 must be accepted by the receiver
// and nothing may fail to export.
func TestLoadRealSDKShape(t *testing.T) {
	bin := requireLoad(t)
	addr, metricsAddr := testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t)
	profilePath, pprofAddr := os.Getenv(envLoadProfile), ""
	if profilePath != "" {
		pprofAddr = testnet.FreeLoopbackAddr(t)
	}
	c := startCollector(t, bin, t.TempDir(), sdkShapedConfig(t, addr, metricsAddr, pprofAddr))
	c.waitListening(t, addr)
	c.waitListening(t, metricsAddr)

	source := loadgen.ChunkSource(benchdata.NodeSDKChunkConfig(), 64)
	// A short warm-up: the pools and the heap reach their working size.
	_, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: envelopeURL("http://" + addr), Workers: 8, Duration: 2 * time.Second,
		Source: source, RetryAfterCap: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	// The warm-up's chunks held for their spans (links::wait, 5 s by
	// default) are released before the measured run is counted.
	time.Sleep(linksWait + time.Second)
	before := scrapeSum(t, metricsAddr, "otelcol_receiver_accepted_profile_samples")
	cpuBefore, err := c.cpuTime()
	require.NoError(t, err)
	profiled := make(chan error, 1)
	if profilePath != "" {
		go func() { profiled <- saveCPUProfile(pprofAddr, profilePath, 15) }()
	} else {
		profiled <- nil
	}

	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: envelopeURL("http://" + addr), Workers: 8, Duration: 20 * time.Second,
		MaxRequests: 2_000_000, Source: source, RetryAfterCap: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	cpuAfter, err := c.cpuTime()
	require.NoError(t, err)
	_, peak, err := c.memory()
	require.NoError(t, err)
	require.NoError(t, <-profiled, "CPU profile of the collector")

	ok := res.Status[http.StatusOK]
	cpuPerEnvelope := time.Duration(0)
	if res.Requests > 0 {
		cpuPerEnvelope = (cpuAfter - cpuBefore) / time.Duration(res.Requests)
	}
	t.Logf("real-SDK-shaped load: %s", res)
	t.Logf("SUMMARY envelopes/s %.0f | p50 %s | p99 %s | collector CPU %.2f ms/envelope (%.1f s over %s) | peak RSS %.0f MiB",
		res.Rate(), res.Latency.Quantile(0.5).Round(10*time.Microsecond), res.Latency.Quantile(0.99).Round(10*time.Microsecond),
		float64(cpuPerEnvelope.Microseconds())/1000, (cpuAfter - cpuBefore).Seconds(), res.Elapsed.Round(time.Millisecond), float64(peak)/mib)

	// The receiver counts as it answers, or once a chunk held for its
	// spans is released (config.yaml keeps the default links::wait, 5 s);
	// the exporters' metrics follow.
	time.Sleep(2*time.Second + linksWait)
	after := scrapeSum(t, metricsAddr, "otelcol_receiver_accepted_profile_samples", "otelcol_receiver_refused_profile_samples",
		"otelcol_exporter_send_failed_profile_samples")
	accepted := after["otelcol_receiver_accepted_profile_samples"] - before["otelcol_receiver_accepted_profile_samples"]
	// Counters scraped as floats hold whole numbers: compared exactly.
	assert.Equal(t, int64(res.Samples), int64(accepted), "samples in envelopes answered 200 vs samples the receiver accepted")
	assert.Zero(t, after["otelcol_exporter_send_failed_profile_samples"], "samples the exporters failed to write")
	assert.Zero(t, res.Errors, "transport errors: %v", res.LastError)
	assert.Equal(t, res.Requests, ok+res.Status[http.StatusTooManyRequests], "answers other than 200 and 429: %v", res.Status)
	assert.Greater(t, ok, res.Requests/2, "most envelopes accepted")
	assert.False(t, c.exited(), "the collector is still running")
}

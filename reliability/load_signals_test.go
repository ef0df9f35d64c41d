package reliability

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/loadgen"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// signalsConfig runs the sentryprofile receiver and the collector's own
// otlp receiver into the same logs and metrics pipelines and the same file
// exporter: the two paths differ only by their receiver.
const signalsConfig = `receivers:
  sentryprofile:
    endpoint: %q
  otlp:
    protocols:
      http:
        endpoint: %q
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [sentryprofile, otlp]
      exporters: [file]
    metrics:
      receivers: [sentryprofile, otlp]
      exporters: [file]
`

// signalCase is one SDK request and its OTLP protobuf equivalent: the
// receiver's own output for it, taken from the file exporter.
type signalCase struct {
	loadgen.Signal
	otlpPath string // /v1/logs or /v1/metrics
	otlp     []byte
}

func signalCases(t *testing.T) []*signalCase {
	t.Helper()
	signals, err := loadgen.Signals(filepath.Join("..", "translator"), 100)
	require.NoError(t, err)
	var cases []*signalCase
	for _, s := range signals {
		path := "/v1/logs"
		if s.ItemType == "trace_metric" {
			path = "/v1/metrics"
		}
		cases = append(cases, &signalCase{Signal: s, otlpPath: path})
	}
	return cases
}

// post sends body and fails on any answer but 200.
func post(client *http.Client, url string, body []byte, gzip bool, contentType string) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	if gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %.200s", url, resp.StatusCode, answer)
	}
	return nil
}

// nextLine waits for the file exporter's next line after the first skip.
func nextLine(t *testing.T, path string, skip int) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 64<<20)
			for n := 0; sc.Scan(); n++ {
				if n == skip {
					line := slices.Clone(sc.Bytes())
					f.Close()
					return line
				}
			}
			f.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the file exporter wrote no line %d in 20 s", skip+1)
	return nil
}

// captureOTLP posts each envelope once and takes the receiver's output
// for it from the file exporter, as an OTLP protobuf request.
func captureOTLP(t *testing.T, cases []*signalCase, sentryURL, out string) {
	t.Helper()
	client := &http.Client{}
	for i, c := range cases {
		require.NoError(t, post(client, sentryURL, c.Envelope, false, "application/x-sentry-envelope"))
		line := nextLine(t, out, i)
		var err error
		if c.otlpPath == "/v1/logs" {
			var logs plog.Logs
			logs, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
			require.NoError(t, err)
			c.otlp, err = (&plog.ProtoMarshaler{}).MarshalLogs(logs)
		} else {
			var metrics pmetric.Metrics
			metrics, err = (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(line)
			require.NoError(t, err)
			c.otlp, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(metrics)
		}
		require.NoError(t, err)
		t.Logf("%s: envelope %d bytes, OTLP protobuf %d bytes (both gzip'd: %v)", c.Name, len(c.Envelope), len(c.otlp), c.Gzip)
		if c.Gzip {
			c.Envelope = compresstest.Bytes(t, "gzip", c.Envelope)
			c.otlp = compresstest.Bytes(t, "gzip", c.otlp)
		}
	}
}

// window is one measured stretch of one path: requests answered and the
// collector's CPU time spent on them.
type window struct {
	requests int64
	cpu      time.Duration
	elapsed  time.Duration
}

// drive posts body from clients goroutines for d and measures.
func drive(t *testing.T, p *collectorProcess, url string, body []byte, gzip bool, contentType string, d time.Duration) window {
	t.Helper()
	const clients = 4
	transport := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	var n atomic.Int64
	var failed atomic.Value
	cpu0, err := p.cpuTime()
	require.NoError(t, err)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for time.Since(start) < d {
				if err := post(client, url, body, gzip, contentType); err != nil {
					failed.Store(err)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := p.cpuTime()
	require.NoError(t, err)
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	return window{requests: n.Load(), cpu: cpu1 - cpu0, elapsed: elapsed}
}

func (w window) rate() float64 { return float64(w.requests) / w.elapsed.Seconds() }

func (w window) cpuPerRequest() time.Duration { return w.cpu / time.Duration(max(w.requests, 1)) }

// envSignalProfiles names a directory: with it, the collector runs its
// pprof extension and, after the rounds, a CPU profile of 3 s of each
// case's Sentry path is saved there (<case>.pprof), and of its OTLP path
// (<case>-otlp.pprof).
const envSignalProfiles = "LOAD_SIGNAL_PROFILES"

// envSignalRounds sets the rounds of TestLoadSignalsAgainstOTLP (default 5).
const envSignalRounds = "LOAD_SIGNAL_ROUNDS"

// envSignalSink names the file the file exporter writes to in the
// measured windows (default: a file on disk, which the OTLP equivalents
// are read from in any case). /dev/null keeps the disk's write-back, which
// both paths share, out of the windows.
const envSignalSink = "LOAD_SIGNAL_SINK"

// TestLoadSignalsAgainstOTLP is `make load`'s errors mode: a real
// @sentry/node 11.1.0 error event (chained exception, two stack traces),
// a Sentry Logs container and a trace_metric container of 100 items each,
// sent to the built collector as the SDK sends them, against the same
// records as OTLP protobuf through the collector's otlp receiver, into the
// same pipeline and file exporter. The paths alternate in 1 s windows
// (which goes first alternates too), 4 clients each; per round it reports
// both paths' requests per second and the collector's CPU per request,
// then medians and spreads of the ratios (≥ 1: the Sentry path is
// faster), and the collector's peak RSS.
func TestLoadSignalsAgainstOTLP(t *testing.T) {
	bin := requireLoad(t)
	rounds := 5
	if s := os.Getenv(envSignalRounds); s != "" {
		var err error
		rounds, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	dir := t.TempDir()
	sentryAddr, otlpAddr := testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t)
	out := filepath.Join(dir, "signals.jsonl")
	config := fmt.Sprintf(signalsConfig, sentryAddr, otlpAddr, out)
	profiles, pprofAddr := os.Getenv(envSignalProfiles), ""
	if profiles != "" {
		pprofAddr = testnet.FreeLoopbackAddr(t)
		config = fmt.Sprintf("extensions:\n  pprof:\n    endpoint: %q\n", pprofAddr) +
			strings.Replace(config, "\n  pipelines:\n", "\n  extensions: [pprof]\n  pipelines:\n", 1)
	}
	p := startCollector(t, bin, dir, config)
	p.waitListening(t, sentryAddr)
	p.waitListening(t, otlpAddr)
	sentryURL := envelopeURL("http://" + sentryAddr)
	cases := signalCases(t)
	captureOTLP(t, cases, sentryURL, out)
	if sink := os.Getenv(envSignalSink); sink != "" {
		// the same collector, its file exporter writing to sink
		p.stop(t)
		p = startCollector(t, bin, dir, strings.Replace(config, fmt.Sprintf("path: %q", out), fmt.Sprintf("path: %q", sink), 1))
		p.waitListening(t, sentryAddr)
		p.waitListening(t, otlpAddr)
	}

	const d = time.Second
	var report strings.Builder
	fmt.Fprintf(&report, "\n| case | round | sentry req/s | otlp req/s | rate ratio | sentry CPU/req | otlp CPU/req | CPU ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range cases {
		var rateRatios, cpuRatios []float64
		for r := range rounds {
			var s, o window
			sentry := func() { s = drive(t, p, sentryURL, c.Envelope, c.Gzip, "application/x-sentry-envelope", d) }
			otlp := func() { o = drive(t, p, "http://"+otlpAddr+c.otlpPath, c.otlp, c.Gzip, "application/x-protobuf", d) }
			if r%2 == 0 {
				sentry()
				otlp()
			} else {
				otlp()
				sentry()
			}
			rate := s.rate() / o.rate()
			cpu := float64(o.cpuPerRequest()) / float64(max(s.cpuPerRequest(), 1))
			rateRatios, cpuRatios = append(rateRatios, rate), append(cpuRatios, cpu)
			fmt.Fprintf(&report, "| %s | %d | %.0f | %.0f | %.2f | %v | %v | %.2f |\n",
				c.Name, r+1, s.rate(), o.rate(), rate, s.cpuPerRequest(), o.cpuPerRequest(), cpu)
		}
		fmt.Fprintf(&report, "| **%s** | median | | | **%.2f** (%.2f–%.2f) | | | **%.2f** (%.2f–%.2f) |\n",
			c.Name, median(rateRatios), slices.Min(rateRatios), slices.Max(rateRatios),
			median(cpuRatios), slices.Min(cpuRatios), slices.Max(cpuRatios))
	}
	for _, c := range cases {
		if profiles == "" {
			break
		}
		for _, path := range []struct {
			file, url, contentType string
			body                   []byte
		}{
			{c.Name + ".pprof", sentryURL, "application/x-sentry-envelope", c.Envelope},
			{c.Name + "-otlp.pprof", "http://" + otlpAddr + c.otlpPath, "application/x-protobuf", c.otlp},
		} {
			done := make(chan error, 1)
			go func() { done <- saveCPUProfile(pprofAddr, filepath.Join(profiles, path.file), 3) }()
			drive(t, p, path.url, path.body, c.Gzip, path.contentType, 3*time.Second)
			require.NoError(t, <-done)
		}
	}
	_, peak, err := p.memory()
	require.NoError(t, err)
	fmt.Fprintf(&report, "\ncollector peak RSS: %d MiB\n", peak>>20)
	t.Log(report.String())
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

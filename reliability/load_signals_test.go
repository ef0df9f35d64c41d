package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	name     string
	envelope []byte
	gzip     bool   // node compresses bodies above 32 KiB; the OTLP body too then
	otlpPath string // /v1/logs or /v1/metrics
	otlp     []byte
}

// nodeGzipAbove is @sentry/node's threshold for compressing a request.
const nodeGzipAbove = 32 << 10

// containerOf repeats the items of a captured container to n items.
func containerOf(t *testing.T, path string, n int) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var c struct {
		Items []json.RawMessage `json:"items"`
	}
	require.NoError(t, json.Unmarshal(raw, &c))
	require.NotEmpty(t, c.Items, path)
	items := make([]json.RawMessage, n)
	for i := range items {
		items[i] = c.Items[i%len(c.Items)]
	}
	out, err := json.Marshal(map[string]any{"version": 2, "items": items})
	require.NoError(t, err)
	return out
}

// nodeEnvelope wraps one item as @sentry/node 11 sends it: no length
// header, a container's item_count and content_type.
func nodeEnvelope(t *testing.T, itemType string, payload []byte, items int) []byte {
	t.Helper()
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, payload))
	header := map[string]any{"type": itemType}
	if items > 0 {
		header["item_count"] = items
		header["content_type"] = "application/vnd.sentry.items." + itemType + "+json"
	}
	h, err := json.Marshal(header)
	require.NoError(t, err)
	env := `{"event_id":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","sent_at":"2026-11-25T22:00:05.000Z","sdk":{"name":"sentry.javascript.node","version":"11.1.0"}}` + "\n"
	return slices.Concat([]byte(env), h, []byte("\n"), compact.Bytes(), []byte("\n"))
}

func signalCases(t *testing.T) []*signalCase {
	t.Helper()
	testdata := func(pkg, name string) string { return filepath.Join("..", "translator", pkg, "testdata", name) }
	event, err := os.ReadFile(testdata("sentryevent", "node11_captured_event_2.json"))
	require.NoError(t, err)
	return []*signalCase{
		{name: "ErrorEvent", envelope: nodeEnvelope(t, "event", event, 0), otlpPath: "/v1/logs"},
		{name: "LogContainer100", envelope: nodeEnvelope(t, "log", containerOf(t, testdata("sentrylog", "node11_captured_logs_1.json"), 100), 100), otlpPath: "/v1/logs"},
		{name: "TraceMetricContainer100", envelope: nodeEnvelope(t, "trace_metric", containerOf(t, testdata("sentrymetric", "node11_captured_metrics_1.json"), 100), 100), otlpPath: "/v1/metrics"},
	}
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
		require.NoError(t, post(client, sentryURL, c.envelope, false, "application/x-sentry-envelope"))
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
		c.gzip = len(c.envelope) > nodeGzipAbove
		if c.gzip {
			c.envelope = compresstest.Bytes(t, "gzip", c.envelope)
			c.otlp = compresstest.Bytes(t, "gzip", c.otlp)
		}
		t.Logf("%s: envelope %d bytes, OTLP protobuf %d bytes (gzip %v)", c.name, len(c.envelope), len(c.otlp), c.gzip)
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

// envSignalRounds sets the rounds of TestLoadSignalsAgainstOTLP (default 5).
const envSignalRounds = "LOAD_SIGNAL_ROUNDS"

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
	p := startCollector(t, bin, dir, fmt.Sprintf(signalsConfig, sentryAddr, otlpAddr, out))
	p.waitListening(t, sentryAddr)
	p.waitListening(t, otlpAddr)
	sentryURL := envelopeURL("http://" + sentryAddr)
	cases := signalCases(t)
	captureOTLP(t, cases, sentryURL, out)

	const d = time.Second
	var report strings.Builder
	fmt.Fprintf(&report, "\n| case | round | sentry req/s | otlp req/s | rate ratio | sentry CPU/req | otlp CPU/req | CPU ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range cases {
		var rateRatios, cpuRatios []float64
		for r := range rounds {
			var s, o window
			sentry := func() { s = drive(t, p, sentryURL, c.envelope, c.gzip, "application/x-sentry-envelope", d) }
			otlp := func() { o = drive(t, p, "http://"+otlpAddr+c.otlpPath, c.otlp, c.gzip, "application/x-protobuf", d) }
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
				c.name, r+1, s.rate(), o.rate(), rate, s.cpuPerRequest(), o.cpuPerRequest(), cpu)
		}
		fmt.Fprintf(&report, "| **%s** | median | | | **%.2f** (%.2f–%.2f) | | | **%.2f** (%.2f–%.2f) |\n",
			c.name, median(rateRatios), slices.Min(rateRatios), slices.Max(rateRatios),
			median(cpuRatios), slices.Min(cpuRatios), slices.Max(cpuRatios))
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

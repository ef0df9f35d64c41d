package prometheus

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The stand-ins the live test runs around the built collector: the
// upstream Sentry its receiver forwards to, the Sentry its exporters send
// to, and the processes themselves.

// upstream is the forward target: down (503, Retry-After: 1) until
// recover is called, then it accepts project 1 and refuses project 2 for
// good (400), which the spool counts as `rejected`.
type upstream struct {
	*httptest.Server
	up       atomic.Bool
	requests atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case !u.up.Load():
			w.Header().Set("Retry-After", "1")
			http.Error(w, "upstream down", http.StatusServiceUnavailable)
		case strings.HasPrefix(r.URL.Path, "/api/2/"):
			http.Error(w, `{"detail":"invalid project"}`, http.StatusBadRequest)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) recover() { u.up.Store(true) }

// Sentry projects of the exporters' stand-in: one rejects every envelope
// (chunks dropped as `rejected`), one rate limits for a minute (the
// exporter's queue backs up).
const (
	projectRejecting = "11"
	projectLimited   = "12"
)

func newSentry(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/"+projectRejecting+"/"):
			http.Error(w, `{"detail":"event submission rejected with_reason: ProjectId"}`, http.StatusForbidden)
		case strings.HasPrefix(r.URL.Path, "/api/"+projectLimited+"/"):
			w.Header().Set("Retry-After", "60")
			w.Header().Set("X-Sentry-Rate-Limits", "60::organization")
			http.Error(w, "rate limited", http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// collectorConfig is the live test's configuration: every pipeline the
// rules watch, each set up so that its alert has something to see.
//   - forward to the upstream stand-in through a spool small enough to
//     overflow while the upstream is down (`full` drops);
//   - a chunk hold of one chunk, so that chunks in flight overflow it, and
//     a span index of one span per profiler (evictions);
//   - profiles to a file (the ordinary path) and to two sentryprofile
//     exporters, one rejected by Sentry and one rate limited with a queue
//     of two requests, which fills and makes the receiver refuse;
//   - a memory_limiter that refuses every log record (4 MiB limit);
//   - traces and metrics to a file.
const collectorConfig = `extensions:
  file_storage:
    directory: %[1]s
receivers:
  sentryprofile:
    endpoint: %[2]s
    links:
      max_held_chunks: 1
      max_spans_per_profiler: 1
    forward:
      endpoint: %[3]s
      timeout: 2s
      storage: file_storage
      spool_max_bytes: 200000
processors:
  memory_limiter:
    check_interval: 100ms
    limit_mib: 4
    spike_limit_mib: 1
exporters:
  file:
    path: %[4]s
  sentryprofile/rejecting:
    dsn: %[5]s/` + projectRejecting + `
    sending_queue:
      batch:
        enabled: false
  sentryprofile/limited:
    dsn: %[5]s/` + projectLimited + `
    sending_queue:
      queue_size: 2
      num_consumers: 1
      batch:
        enabled: false
service:
  extensions: [file_storage]
  telemetry:
    logs:
      level: warn
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[6]s
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [file]
    profiles/sentry:
      receivers: [sentryprofile]
      exporters: [sentryprofile/rejecting, sentryprofile/limited]
    traces:
      receivers: [sentryprofile]
      exporters: [file]
    logs:
      receivers: [sentryprofile]
      processors: [memory_limiter]
      exporters: [file]
    metrics:
      receivers: [sentryprofile]
      exporters: [file]
`

type collector struct {
	receiver, metrics string // loopback host:port
}

func startCollector(t *testing.T, bin, upstreamURL, sentryURL string) collector {
	t.Helper()
	dir := t.TempDir()
	spool := filepath.Join(dir, "spool")
	require.NoError(t, os.Mkdir(spool, 0o700))
	c := collector{receiver: freeAddr(t), metrics: freeAddr(t)}
	_, metricsPort, _ := strings.Cut(c.metrics, ":")
	dsn := strings.Replace(sentryURL, "http://", "http://livekey@", 1)
	config := fmt.Sprintf(collectorConfig, spool, c.receiver, upstreamURL, filepath.Join(dir, "out.jsonl"), dsn, metricsPort)
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	startProcess(t, exec.Command(bin, "--config="+path, "--feature-gates=service.profilesSupport"), "http://"+c.metrics+"/metrics")
	return c
}

// startPrometheus runs a Prometheus of its own on loopback, with its own
// storage, scraping the collector and evaluating rules every second; it
// returns the base URL of its HTTP API. Nothing here uses a Prometheus
// service the package may have started on install.
func startPrometheus(t *testing.T, bin, rulesFile, target string) string {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: otelcol
    static_configs:
      - targets: [%q]
`, rulesFile, target)
	path := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	startProcess(t, exec.Command(bin,
		"--config.file="+path,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn"), "http://"+addr+"/-/ready")
	return "http://" + addr
}

// startProcess starts cmd, waits until readyURL answers 200, and stops it
// (SIGTERM, then SIGKILL) when the test ends; its output is shown if it
// exits early or never gets ready, and when the test fails.
func startProcess(t *testing.T, cmd *exec.Cmd, readyURL string) {
	t.Helper()
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(cmd.Path), tail(logs.String(), 4000))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(readyURL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", cmd.Path, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s not ready at %s:\n%s", cmd.Path, readyURL, logs.String())
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// syncBuffer collects a process's output from two pipes at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

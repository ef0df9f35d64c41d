package reliability

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// envLoad switches on the load and fault tests; `make load` sets it.
const envLoad = "LOAD"

// requireLoad skips a load or fault test unless LOAD=1, and returns the
// built collector, skipping when it is absent: these tests build nothing.
func requireLoad(t *testing.T) string {
	t.Helper()
	if os.Getenv(envLoad) != "1" {
		t.Skipf("load and fault test: set %s=1 to run it against the built collector (make load); it takes about a minute", envLoad)
	}
	if testing.Short() {
		t.Skip("load and fault tests do not run in -short mode")
	}
	return builtCollector(t)
}

// builtCollector returns OTELCOL_BIN, else ../bin/otelcol-sentryprofile,
// skipping when there is no binary there.
func builtCollector(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_BIN")
	if bin == "" {
		root, err := filepath.Abs("..")
		require.NoError(t, err)
		bin = filepath.Join(root, "bin", "otelcol-sentryprofile")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no collector binary at %s (run `make build` first): %v", bin, err)
	}
	return bin
}

// collectorProcess is a running collector binary.
type collectorProcess struct {
	cmd  *exec.Cmd
	log  string // path of its combined output
	done chan struct{}
	err  error
}

// startCollector writes configYAML into dir and starts the collector with
// it and the profiles feature gate. It is stopped (SIGTERM) when the test
// ends, and its output is shown when the test failed.
func startCollector(t *testing.T, bin, dir, configYAML string) *collectorProcess {
	t.Helper()
	config := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(configYAML), 0o600))
	logPath := filepath.Join(dir, fmt.Sprintf("collector-%d.log", time.Now().UnixNano()))
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, "--config", config, "--feature-gates=service.profilesSupport")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	p := &collectorProcess{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("collector output (tail):\n%s", p.outputTail(6000))
		}
	})
	return p
}

func (p *collectorProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for a graceful exit.
func (p *collectorProcess) stop(t *testing.T) {
	t.Helper()
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("collector did not stop within 30s of SIGTERM; killing it")
		p.kill(t)
	}
}

// kill sends SIGKILL: no shutdown, no flush, as an OOM killer would.
func (p *collectorProcess) kill(t *testing.T) {
	t.Helper()
	if p.exited() {
		return
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

// waitListening waits until addr accepts connections.
func (p *collectorProcess) waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() {
			t.Fatalf("collector exited before listening on %s: %v\n%s", addr, p.err, p.outputTail(6000))
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("collector not listening on %s after 60s\n%s", addr, p.outputTail(6000))
}

// memory reads the process's resident set now and at its peak (VmRSS and
// VmHWM of /proc/<pid>/status), in bytes.
func (p *collectorProcess) memory() (rss, peak uint64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("collector memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("collector memory: %s %q: %w", key, value, err)
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, sc.Err()
}

func (p *collectorProcess) outputTail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}

// otlpSink is the OTLP/HTTP endpoint a collector exports profiles to: it
// decodes each ExportProfilesServiceRequest and counts its sample events.
type otlpSink struct {
	url      string
	delay    time.Duration // each request is answered after this long
	samples  atomic.Int64
	requests atomic.Int64
	failures atomic.Int64 // requests it could not decode
	srv      *http.Server
}

func startOTLPSink(t *testing.T, delay time.Duration) *otlpSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &otlpSink{url: "http://" + l.Addr().String(), delay: delay}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

func (s *otlpSink) serve(w http.ResponseWriter, r *http.Request) {
	body, err := testnet.RequestBody(r)
	if err == nil {
		req := pprofileotlp.NewExportRequest()
		if err = req.UnmarshalProto(body); err == nil {
			time.Sleep(s.delay)
			s.samples.Add(int64(profilestest.SampleEvents(req.Profiles())))
			s.requests.Add(1)
			resp, _ := pprofileotlp.NewExportResponse().MarshalProto()
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(resp)
			return
		}
	}
	s.failures.Add(1)
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// fakeSentry is the Sentry a sentryprofile exporter delivers to. Its mode
// decides every answer; it stores the chunks of an envelope only when it
// answers 200, as Relay does, so a chunk seen twice is a duplicate delivery.
type fakeSentry struct {
	addr string

	mu       sync.Mutex
	mode     sentryMode
	listener net.Listener
	srv      *http.Server
	chunks   map[string]int // chunk_id → times accepted
	answers  map[int]int    // status → count
	errs     []error
}

type sentryMode int

const (
	sentryAccept sentryMode = iota
	sentryDown              // nothing listens
	sentrySlow              // accepts after 2 s
	sentry429               // rate limited: 429, Retry-After and X-Sentry-Rate-Limits for profile chunks
	sentry500
	sentry503
)

func (m sentryMode) String() string {
	return [...]string{"accept", "down", "slow", "429 storm", "500s", "503s"}[m]
}

func startFakeSentry(t *testing.T) *fakeSentry {
	t.Helper()
	s := &fakeSentry{addr: testnet.FreeLoopbackAddr(t), chunks: map[string]int{}, answers: map[int]int{}}
	s.setMode(t, sentryAccept)
	t.Cleanup(func() { s.setMode(t, sentryDown) })
	return s
}

// setMode switches the behaviour; "down" closes the listener, leaving the
// port refusing connections, and any other mode opens it again.
func (s *fakeSentry) setMode(t *testing.T, m sentryMode) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
	switch {
	case m == sentryDown && s.srv != nil:
		_ = s.srv.Close()
		s.srv, s.listener = nil, nil
	case m != sentryDown && s.srv == nil:
		var l net.Listener
		var err error
		// The port was ours a moment ago; another process may grab it in
		// between, which fails the test rather than hiding anything.
		for range 50 {
			if l, err = net.Listen("tcp", s.addr); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		require.NoError(t, err, "fake Sentry: listen again on %s", s.addr)
		s.listener = l
		s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
		go func(srv *http.Server) { _ = srv.Serve(l) }(s.srv)
	}
}

func (s *fakeSentry) serve(w http.ResponseWriter, r *http.Request) {
	body, err := testnet.RequestBody(r)
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	status := http.StatusOK
	switch mode {
	case sentrySlow:
		time.Sleep(2 * time.Second)
	case sentry429:
		w.Header().Set("Retry-After", "1")
		w.Header().Set("X-Sentry-Rate-Limits", "1:profile_chunk;profile_chunk_ui:key:ratelimited")
		status = http.StatusTooManyRequests
	case sentry500:
		status = http.StatusInternalServerError
	case sentry503:
		w.Header().Set("Retry-After", "1")
		status = http.StatusServiceUnavailable
	}
	var ids []string
	if err == nil && status == http.StatusOK {
		ids, err = chunkIDs(body)
	}
	s.mu.Lock()
	if err != nil {
		s.errs = append(s.errs, err)
		status = http.StatusBadRequest
	}
	for _, id := range ids {
		s.chunks[id]++
	}
	s.answers[status]++
	s.mu.Unlock()
	w.WriteHeader(status)
	if status == http.StatusOK {
		_, _ = w.Write([]byte(`{}`))
	}
}

// chunkIDs reads the chunk_id of every profile chunk in an envelope.
func chunkIDs(body []byte) ([]string, error) {
	_, items, err := envelope.Parse(body, envelope.Limits{})
	if err != nil {
		return nil, fmt.Errorf("fake Sentry: envelope: %w", err)
	}
	var ids []string
	for i, it := range items {
		if it.Header.Type != "profile_chunk" && it.Header.Type != "profile_chunk_ui" {
			continue
		}
		p, err := sentry.DecodeProfile(it.Payload)
		if err != nil {
			return nil, fmt.Errorf("fake Sentry: item %d: %w", i, err)
		}
		if p.ChunkID == "" {
			return nil, errors.New("fake Sentry: chunk without chunk_id")
		}
		ids = append(ids, p.ChunkID)
	}
	return ids, nil
}

// snapshot returns what was accepted so far.
func (s *fakeSentry) snapshot() (chunks map[string]int, answers map[int]int, errs []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chunks = make(map[string]int, len(s.chunks))
	for k, v := range s.chunks {
		chunks[k] = v
	}
	answers = make(map[int]int, len(s.answers))
	for k, v := range s.answers {
		answers[k] = v
	}
	return chunks, answers, append([]error(nil), s.errs...)
}

// waitFor polls cond every 200 ms until it holds or timeout passes, and
// reports whether it held.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// yamlQuote quotes a value for the generated configurations.
func yamlQuote(s string) string { return strconv.Quote(s) }

package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

const (
	// envBinary names the collector binary the TestCollector* tests start.
	envBinary = "OTELCOL_BIN"
	// envSentryprof names the sentryprof binary TestSentryprofPprof runs.
	envSentryprof = "SENTRYPROF_BIN"
	// envE2E switches on the tests that install and run the real Sentry SDK.
	envE2E = "E2E"
	// profilesGate must be on for a collector to accept a profiles pipeline.
	profilesGate = "--feature-gates=service.profilesSupport"
)

// repoRoot is the repository checkout this package lives in.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// requireBinary returns the collector binary named by OTELCOL_BIN, or skips:
// `go test ./...` runs before `make build`, and a binary left over from an
// earlier build may not match the sources under test.
func requireBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(envBinary)
	if bin == "" {
		t.Skipf("%s is not set: this test starts the built collector; run `make smoke` (or set %s=bin/otelcol-sentryprofile after `make build`)", envBinary, envBinary)
	}
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(repoRoot(t), bin)
	}
	info, err := os.Stat(bin)
	require.NoError(t, err, "%s=%s", envBinary, bin)
	require.False(t, info.IsDir(), "%s=%s is a directory", envBinary, bin)
	return bin
}

// collectorProcess is a running collector whose output is kept for the test
// log.
type collectorProcess struct {
	cmd    *exec.Cmd
	output *lockedBuffer
	done   chan struct{}
	err    error // valid once done is closed
}

// startCollector starts bin with args, and env added to this process's
// environment, and stops it when the test ends: first SIGTERM so that
// exporters flush, then SIGKILL after ten seconds.
func startCollector(t testing.TB, bin string, env []string, args ...string) *collectorProcess {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	p := &collectorProcess{cmd: cmd, output: out, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("collector output:\n%s", out.String())
		}
	})
	return p
}

func (p *collectorProcess) stop(t testing.TB) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("collector did not stop within 10s of SIGTERM; killing it")
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitListening waits until addr accepts TCP connections, failing early if
// the collector exits.
func (p *collectorProcess) waitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("collector exited before listening on %s: %v\n%s", addr, p.err, p.output.String())
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("collector not listening on %s after 60s\n%s", addr, p.output.String())
}

// lockedBuffer collects a child process's output from two pipes at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// postEnvelope sends an envelope the way SDKs authenticate with the query
// string, and returns the status and body of the answer.
func postEnvelope(t testing.TB, addr, project, key string, body []byte, header http.Header) (int, string) {
	t.Helper()
	u := fmt.Sprintf("http://%s/api/%s/envelope/?sentry_key=%s&sentry_version=7", addr, project, url.QueryEscape(key))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(answer)
}

// readJSONLines decodes a file exporter's output: one OTLP JSON request per
// line. A missing file is no profiles yet. A last line without its newline is
// being written and is left for the next read.
func readJSONLines(path string) ([]pprofile.Profiles, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		return nil, nil
	}
	var out []pprofile.Profiles
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	var um pprofile.JSONUnmarshaler
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		pd, err := um.UnmarshalProfiles(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		out = append(out, pd)
	}
	return out, sc.Err()
}

// profilesSummary is what the tests check in pipeline output, gathered over
// any number of pprofile.Profiles.
type profilesSummary struct {
	Profiles     int
	SampleEvents int                 // samples as the SDK counts them: one per timestamp
	Functions    map[string]bool     // function names
	Threads      map[string]string   // thread.id → thread.name of sampled threads
	Resources    []map[string]string // resource attributes, rendered as strings
}

func (s profilesSummary) hasResource(key, value string) bool {
	for _, r := range s.Resources {
		if r[key] == value {
			return true
		}
	}
	return false
}

func summarize(pds ...pprofile.Profiles) profilesSummary {
	s := profilesSummary{Functions: map[string]bool{}, Threads: map[string]string{}}
	for _, pd := range pds {
		dict := pd.Dictionary()
		strs := dict.StringTable()
		str := func(i int32) string {
			if i < 0 || int(i) >= strs.Len() {
				return ""
			}
			return strs.At(int(i))
		}
		for i := 0; i < dict.FunctionTable().Len(); i++ {
			if name := str(dict.FunctionTable().At(i).NameStrindex()); name != "" {
				s.Functions[name] = true
			}
		}
		attrs := dict.AttributeTable()
		rps := pd.ResourceProfiles()
		for i := 0; i < rps.Len(); i++ {
			rp := rps.At(i)
			res := map[string]string{}
			for k, v := range rp.Resource().Attributes().All() {
				res[k] = v.AsString()
			}
			s.Resources = append(s.Resources, res)
			for j := 0; j < rp.ScopeProfiles().Len(); j++ {
				profs := rp.ScopeProfiles().At(j).Profiles()
				for k := 0; k < profs.Len(); k++ {
					s.Profiles++
					samples := profs.At(k).Samples()
					for m := 0; m < samples.Len(); m++ {
						sample := samples.At(m)
						s.SampleEvents += sampleEvents(sample)
						var id, name string
						for _, ai := range sample.AttributeIndices().All() {
							if ai < 0 || int(ai) >= attrs.Len() {
								continue
							}
							kv := attrs.At(int(ai))
							switch str(kv.KeyStrindex()) {
							case string(semconv.ThreadIDKey):
								id = kv.Value().AsString()
							case string(semconv.ThreadNameKey):
								name = kv.Value().AsString()
							}
						}
						if id != "" || name != "" {
							s.Threads[id] = name
						}
					}
				}
			}
		}
	}
	return s
}

// sampleEvents counts the observations one pprofile Sample stands for: one
// per timestamp, else the sum of its values for an aggregated sample.
func sampleEvents(s pprofile.Sample) int {
	if n := s.TimestampsUnixNano().Len(); n > 0 {
		return n
	}
	total := 0
	for _, v := range s.Values().All() {
		total += int(v)
	}
	if total == 0 {
		return 1
	}
	return total
}

// recordedRequest is one SDK request as the recorder saw it.
type recordedRequest struct {
	Method   string
	Path     string
	Query    url.Values
	Header   http.Header
	Body     []byte // decompressed
	Status   int    // the receiver's answer
	Response string
}

// sdkRecorder is a reverse proxy between an SDK and a receiver that keeps a
// decompressed copy of every request and the receiver's answer. The request
// goes on exactly as the SDK sent it (encoding, chunking and all).
type sdkRecorder struct {
	mu       sync.Mutex
	requests []recordedRequest
	errs     []error
}

func newSDKRecorder(t testing.TB, target string) (*sdkRecorder, string) {
	t.Helper()
	targetURL, err := url.Parse("http://" + target)
	require.NoError(t, err)
	rec := &sdkRecorder{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(targetURL) },
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rec.serve(proxy, w, r) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rec, l.Addr().String()
}

func (rec *sdkRecorder) serve(proxy http.Handler, w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		rec.fail(fmt.Errorf("%s: reading the SDK's body: %w", r.URL.Path, err))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body, err := decompress(r.Header.Get("Content-Encoding"), raw)
	if err != nil {
		rec.fail(fmt.Errorf("%s: %w", r.URL.Path, err))
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	cw := &capturingWriter{ResponseWriter: w, status: http.StatusOK}
	proxy.ServeHTTP(cw, r)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.requests = append(rec.requests, recordedRequest{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(),
		Body: body, Status: cw.status, Response: cw.body.String(),
	})
}

func (rec *sdkRecorder) fail(err error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.errs = append(rec.errs, err)
}

// snapshot returns the requests recorded so far and the recorder's errors.
func (rec *sdkRecorder) snapshot() ([]recordedRequest, error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recordedRequest(nil), rec.requests...), errors.Join(rec.errs...)
}

type capturingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *capturingWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *capturingWriter) Write(p []byte) (int, error) {
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

// decompress undoes the Content-Encodings Sentry SDKs use.
func decompress(encoding string, raw []byte) ([]byte, error) {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		r = zr
	case "deflate": // zlib-wrapped, as in HTTP and Relay
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("deflate body: %w", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(raw))
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("zstd body: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("content-encoding %q is not one Sentry SDKs use", encoding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s body: %w", encoding, err)
	}
	return out, nil
}

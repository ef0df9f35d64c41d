package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/sentryprofile/otelcol-sentryprofile/compat/pyroscope"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// envPyroscope names a Grafana Pyroscope binary (built from its source:
// docs/symbolication-in-pyroscope.md) that TestPyroscopeShowsSentrysTime
// exports to instead of compat/pyroscope's model of it.
const envPyroscope = "PYROSCOPE_BIN"

// pyroscopeMaxSamples is the max_profile_stacktrace_samples Pyroscope runs
// with here, the setting docs/pyroscope-time.md gives: off. With its
// default (16,000) it refuses whole every profile of more samples, and a
// sentry-python chunk of 60 s has one per thread per tick (compat/pyroscope
// TestStoreRefusesProfilesOverTheSampleLimit).
const pyroscopeMaxSamples = 0

// pyroscopeBackend is where the collector exports profiles, and what it
// shows of them.
type pyroscopeBackend interface {
	// Endpoint is the otlp_http exporter's endpoint.
	Endpoint() string
	// Totals is the total wall time, in nanoseconds, that Pyroscope shows
	// for each service over the windows, once everything sent is queryable.
	Totals(t *testing.T, services []string, windows []timeWindow) map[string]int64
	String() string
}

// startPyroscope starts the real Pyroscope when PYROSCOPE_BIN is set, else
// a loopback OTLP endpoint that reads what arrives as Pyroscope would.
func startPyroscope(t *testing.T) pyroscopeBackend {
	t.Helper()
	if bin := os.Getenv(envPyroscope); bin != "" {
		return startRealPyroscope(t, bin)
	}
	return startModelPyroscope(t)
}

// modelPyroscope is compat/pyroscope's Store behind Pyroscope's OTLP/HTTP
// path (protobuf, gzip or not).
type modelPyroscope struct {
	url   string
	store *pyroscope.Store
}

func startModelPyroscope(t *testing.T) *modelPyroscope {
	t.Helper()
	m := &modelPyroscope{store: pyroscope.NewStore(pyroscopeMaxSamples)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	m.url = "http://" + l.Addr().String()
	return m
}

func (m *modelPyroscope) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1development/profiles" {
		http.NotFound(w, r)
		return
	}
	data, err := testnet.RequestBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectorv1.ExportProfilesServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := m.store.Push(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(&collectorv1.ExportProfilesServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (m *modelPyroscope) Endpoint() string { return m.url }

func (m *modelPyroscope) String() string {
	return "compat/pyroscope's model of Pyroscope (set " + envPyroscope + " for the real one)"
}

func (m *modelPyroscope) Totals(t *testing.T, _ []string, _ []timeWindow) map[string]int64 {
	t.Helper()
	// A refused profile is missing from the totals, as from Pyroscope's:
	// the share per service is what the check judges.
	for _, r := range m.store.Refused() {
		t.Logf("Pyroscope refuses the profile of %d samples of service %s (max_profile_stacktrace_samples %d)", r.Samples, r.Service, pyroscopeMaxSamples)
	}
	return m.store.Totals()
}

// realPyroscope is a single-binary Pyroscope on loopback with its data in a
// temporary directory.
type realPyroscope struct {
	http string // host:port
	out  *lockedBuffer
}

func startRealPyroscope(t *testing.T, bin string) *realPyroscope {
	t.Helper()
	dir := t.TempDir()
	httpAddr := testnet.FreeLoopbackAddr(t)
	port := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		return p
	}
	grpcAddr, memberlist, admin, raft := testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t), testnet.FreeLoopbackAddr(t)
	args := []string{
		"-server.http-listen-address=127.0.0.1", "-server.http-listen-port=" + port(httpAddr),
		"-server.grpc-listen-address=127.0.0.1", "-server.grpc-listen-port=" + port(grpcAddr),
		"-memberlist.bind-addr=127.0.0.1", "-memberlist.bind-port=" + port(memberlist),
		"-memberlist.advertise-addr=127.0.0.1", "-memberlist.advertise-port=" + port(memberlist),
		"-admin-server.http-listen-address=127.0.0.1", "-admin-server.http-listen-port=" + port(admin),
		"-metastore.address=127.0.0.1:" + port(grpcAddr), "-query-backend.address=127.0.0.1:" + port(grpcAddr),
		"-distributor.ring.instance-addr=127.0.0.1", "-compactor.ring.instance-addr=127.0.0.1",
		"-ingester.lifecycler.addr=127.0.0.1", "-segment-writer.lifecycler.addr=127.0.0.1",
		"-overrides-exporter.ring.instance-addr=127.0.0.1", "-query-frontend.instance-addr=127.0.0.1",
		"-query-scheduler.ring.instance-addr=127.0.0.1", "-store-gateway.sharding-ring.instance-addr=127.0.0.1",
		"-metastore.raft.bind-address=127.0.0.1:" + port(raft),
		"-metastore.raft.advertise-address=127.0.0.1:" + port(raft),
		"-metastore.raft.server-id=127.0.0.1:" + port(raft),
		"-validation.max-profile-stacktrace-samples=" + strconv.Itoa(pyroscopeMaxSamples),
		// Query segments from the first profile on (the default waits for
		// a split time it learns later: docs/symbolication-in-pyroscope.md).
		"-enable-query-backend-from=2020-01-01T00:00:00Z",
		"-self-profiling.disable-push=true",
		"-config.show_banner=false",
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("pyroscope output:\n%s", out.String())
		}
	})
	p := &realPyroscope{http: httpAddr, out: out}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-done:
			t.Fatalf("pyroscope exited:\n%s", out.String())
		default:
		}
		resp, err := http.Get("http://" + httpAddr + "/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pyroscope not ready after 3 min:\n%s", out.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (p *realPyroscope) Endpoint() string { return "http://" + p.http }

func (p *realPyroscope) String() string { return "Grafana Pyroscope (" + envPyroscope + ")" }

// Totals asks Pyroscope's query API for each service's flame graph total
// over the windows, until two answers 10 s apart agree and are not empty
// (Pyroscope flushes segments, then compacts them), or 3 minutes.
func (p *realPyroscope) Totals(t *testing.T, services []string, windows []timeWindow) map[string]int64 {
	t.Helper()
	var prev map[string]int64
	deadline := time.Now().Add(3 * time.Minute)
	for {
		cur := map[string]int64{}
		for _, svc := range services {
			for _, w := range windows {
				total, err := p.total(svc, w)
				require.NoError(t, err)
				cur[svc] += total
			}
		}
		stable := prev != nil && fmt.Sprint(prev) == fmt.Sprint(cur)
		for _, v := range cur {
			stable = stable && v > 0
		}
		if stable || time.Now().After(deadline) {
			return cur
		}
		prev = cur
		time.Sleep(10 * time.Second)
	}
}

func (p *realPyroscope) total(service string, w timeWindow) (int64, error) {
	q, err := json.Marshal(map[string]any{
		"profile_typeID": "wall:wall:nanoseconds:wall:nanoseconds",
		"label_selector": fmt.Sprintf("{service_name=%q}", service),
		"start":          w.start.UnixMilli(),
		"end":            w.end.UnixMilli(),
		"format":         "PROFILE_FORMAT_FLAMEGRAPH",
	})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.http+"/querier.v1.QuerierService/SelectMergeStacktraces", bytes.NewReader(q))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("SelectMergeStacktraces %s: %s: %s", service, resp.Status, body)
	}
	var answer struct {
		Flamegraph struct {
			Total string `json:"total"`
		} `json:"flamegraph"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return 0, fmt.Errorf("SelectMergeStacktraces %s: %w: %s", service, err, body)
	}
	if answer.Flamegraph.Total == "" {
		return 0, nil
	}
	return strconv.ParseInt(answer.Flamegraph.Total, 10, 64)
}

// timeWindow is a query's time range.
type timeWindow struct{ start, end time.Time }

// queryWindows covers the profiles' start times with windows of at most a
// few hours (Pyroscope refuses queries longer than a day, and a long one
// over days of nothing times out): times less than an hour apart share one.
func queryWindows(times []time.Time) []timeWindow {
	sorted := slices.SortedFunc(slices.Values(times), time.Time.Compare)
	var out []timeWindow
	for _, at := range sorted {
		if n := len(out); n > 0 && at.Sub(out[n-1].end) < time.Hour {
			out[n-1].end = at.Add(time.Minute)
			continue
		}
		out = append(out, timeWindow{start: at.Add(-time.Minute), end: at.Add(time.Minute)})
	}
	return out
}

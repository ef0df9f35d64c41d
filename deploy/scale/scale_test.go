// Package scale measures what scaling out does to span links: real
// @sentry/node 11 processes send through HAProxy (Debian's, started here on
// loopback) to two built collectors, with each balancing policy, and the
// collectors' own counters say what share of the samples got their span
// link. `make scale` runs it (SCALE=1); it is not part of `make test`.
package scale

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// policy is one way of spreading requests over the replicas.
type policy struct {
	name    string
	balance string // HAProxy's `balance` line; "" sends to one collector directly
}

var policies = []policy{
	{"one replica, no balancer (reference)", ""},
	{"round robin", "balance roundrobin"},
	{"source address hash", "balance source\n  hash-type consistent"},
	{"X-Collector-Affinity header hash", "balance hdr(X-Collector-Affinity)\n  hash-type consistent"},
}

// TestScaleOut runs every policy with both trace lifecycles of the SDK
// and prints a table. Linking is what is measured, not judged: it asserts
// only that samples arrived and that every replica behind the balancer
// got requests under round robin.
func TestScaleOut(t *testing.T) {
	env := scaleEnv(t)
	processes := envInt(t, "SCALE_PROCESSES", 8)
	var rows []string
	for _, lifecycle := range []string{"static", "stream"} {
		for _, p := range policies {
			r := runPolicy(t, env, p, lifecycle, processes)
			require.Positive(t, r.samples, "%s, %s: samples arrived", p.name, lifecycle)
			if p.balance == "balance roundrobin" {
				for i, n := range r.requests {
					require.Positive(t, n, "round robin sent requests to replica %d", i)
				}
			}
			rows = append(rows, r.row(p.name, lifecycle))
			t.Logf("%s", rows[len(rows)-1])
		}
	}
	table := "| policy | SDK lifecycle | processes | samples | linked | requests per replica |\n|---|---|---|---|---|---|\n" +
		strings.Join(rows, "\n") + "\n"
	fmt.Print("\n" + table)
	if out := os.Getenv("SCALE_TABLE"); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(table), 0o644))
	}
}

// scaleEnvironment is what a run needs from the machine.
type scaleEnvironment struct {
	collector, haproxy, node, nodePath, client string
}

func scaleEnv(t *testing.T) scaleEnvironment {
	t.Helper()
	if os.Getenv("SCALE") != "1" {
		t.Skip("SCALE=1 runs the scaling measurement (`make scale`)")
	}
	e := scaleEnvironment{collector: os.Getenv("OTELCOL_BIN")}
	require.NotEmpty(t, e.collector, "OTELCOL_BIN: the built collector")
	var err error
	e.haproxy, err = exec.LookPath("haproxy")
	require.NoError(t, err, "haproxy (Debian's package) is needed")
	e.node, err = exec.LookPath("node")
	require.NoError(t, err, "node is needed")
	e.nodePath, err = filepath.Abs("../../e2e/node/node_modules")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(e.nodePath, "@sentry", "node"))
	require.NoError(t, err, "e2e/node's packages: run `make e2e-deps`")
	e.client, err = filepath.Abs("client.js")
	require.NoError(t, err)
	return e
}

// result is what the two collectors counted in one run.
type result struct {
	processes       int
	linked, samples int
	requests        []int // envelope POSTs answered, per replica
}

func (r result) row(policy, lifecycle string) string {
	share := 0.0
	if r.samples > 0 {
		share = 100 * float64(r.linked) / float64(r.samples)
	}
	reqs := make([]string, len(r.requests))
	for i, n := range r.requests {
		reqs[i] = strconv.Itoa(n)
	}
	return fmt.Sprintf("| %s | %s | %d | %d | %d (%.1f%%) | %s |", policy, lifecycle, r.processes, r.samples, r.linked, share, strings.Join(reqs, " / "))
}

// runPolicy starts two collectors (one for the reference) and the
// balancer, runs the SDK processes, waits for the held chunks to be
// translated and reads the counters.
func runPolicy(t *testing.T, e scaleEnvironment, p policy, lifecycle string, processes int) result {
	t.Helper()
	replicas := 2
	if p.balance == "" {
		replicas = 1
	}
	var collectors []collectorAddrs
	for i := 0; i < replicas; i++ {
		collectors = append(collectors, startCollector(t, e.collector))
	}
	entry := collectors[0].receiver
	if p.balance != "" {
		entry = startHAProxy(t, e.haproxy, p.balance, collectors)
	}
	runClients(t, e, entry, lifecycle, processes)
	return settle(t, collectors, processes)
}

// runClients runs the SDK processes, four at a time (2 cores), each with
// its own source address and affinity key.
func runClients(t *testing.T, e scaleEnvironment, entry, lifecycle string, processes int) {
	t.Helper()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	errs := make(chan error, processes)
	for i := 0; i < processes; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- runClient(e, entry, lifecycle, i)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func runClient(e scaleEnvironment, entry, lifecycle string, i int) error {
	key := make([]byte, 8)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, e.client)
	cmd.Env = append(os.Environ(),
		"NODE_PATH="+e.nodePath,
		"SENTRY_DSN=http://scalekey@"+entry+"/1",
		"SCALE_LIFECYCLE="+lifecycle,
		fmt.Sprintf("SCALE_SOURCE_ADDRESS=127.0.0.%d", 10+i),
		"SCALE_AFFINITY="+hex.EncodeToString(key))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("SDK process %d: %w\n%s", i, err, out)
	}
	return nil
}

// settle waits until every chunk held for its spans (links::wait) has
// been translated, then adds up the collectors' counters.
func settle(t *testing.T, collectors []collectorAddrs, processes int) result {
	t.Helper()
	var last result
	stable := 0
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		r := result{processes: processes}
		for _, c := range collectors {
			m, err := scrape(c.metrics)
			require.NoError(t, err)
			r.linked += m.linked
			r.samples += m.linked + m.unlinked
			r.requests = append(r.requests, m.posts)
		}
		if r.samples == last.samples && r.samples > 0 {
			stable++
			if stable >= 6 { // longer than links::wait (5 s)
				return r
			}
		} else {
			stable = 0
		}
		last = r
	}
	t.Fatalf("the collectors' sample counts did not settle within 60 s: %+v", last)
	return result{}
}

// collectorAddrs are one collector's loopback addresses.
type collectorAddrs struct{ receiver, metrics string }

func startCollector(t *testing.T, bin string) collectorAddrs {
	t.Helper()
	a := collectorAddrs{receiver: freeAddr(t), metrics: freeAddr(t)}
	host, port, _ := strings.Cut(a.metrics, ":")
	config := fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %q
exporters:
  file:
    path: /dev/null
    format: proto
service:
  telemetry:
    logs:
      level: warn
    metrics:
      # detailed: the HTTP server's request counts, per replica.
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: %q
                port: %s
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [file]
`, a.receiver, host, port)
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	startProcess(t, exec.Command(bin, "--config="+path, "--feature-gates=service.profilesSupport"), a.metrics)
	return a
}

func startHAProxy(t *testing.T, bin, balance string, collectors []collectorAddrs) string {
	t.Helper()
	front := freeAddr(t)
	var servers strings.Builder
	for i, c := range collectors {
		fmt.Fprintf(&servers, "  server replica%d %s\n", i, c.receiver)
	}
	stats := freeAddr(t)
	config := fmt.Sprintf(`global
  maxconn 512
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend sentry
  bind %s
  default_backend collectors
frontend stats
  bind %s
  http-request return status 200 content-type text/plain string ok
backend collectors
  %s
%s`, front, stats, balance, servers.String())
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	check, err := exec.Command(bin, "-c", "-f", path).CombinedOutput()
	require.NoError(t, err, "haproxy -c:\n%s\n%s", check, config)
	startProcess(t, exec.Command(bin, "-db", "-f", path), stats)
	return front
}

// startProcess starts cmd, waits until readyAddr answers HTTP, and stops
// it (SIGTERM, then SIGKILL) when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, readyAddr string) {
	t.Helper()
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
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
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + readyAddr + "/metrics")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", cmd.Path, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not answer on %s:\n%s", cmd.Path, readyAddr, logs.String())
}

// counters are one collector's numbers that the measurement reads.
type counters struct {
	linked, unlinked int
	posts            int // envelope POSTs answered
}

// scrape reads a collector's Prometheus endpoint.
func scrape(addr string) (counters, error) {
	var c counters
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return c, fmt.Errorf("scraping %s: %w", addr, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return c, fmt.Errorf("metric line %q: %w", line, err)
		}
		switch {
		case strings.HasPrefix(name, "otelcol_receiver_sentryprofile_linked_samples"):
			if strings.Contains(labels, `linked="true"`) {
				c.linked += int(v)
			} else {
				c.unlinked += int(v)
			}
		case strings.HasPrefix(name, "http_server_request_duration") && strings.HasSuffix(name, "_count") &&
			strings.Contains(labels, `http_request_method="POST"`):
			c.posts += int(v)
		}
	}
	return c, sc.Err()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", name)
	return n
}

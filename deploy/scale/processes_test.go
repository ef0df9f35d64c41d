package scale

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// collectorAddrs are one collector's loopback addresses and its process.
type collectorAddrs struct {
	receiver, metrics string
	process           *os.Process
}

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
	a.process = startProcess(t, exec.Command(bin, "--config="+path, "--feature-gates=service.profilesSupport"), a.metrics)
	return a
}

// startHAProxy balances over the collectors with the backend lines given
// (`balance …` and options); serverOptions follow each server line (health
// checks). It returns the frontend's address and the stats listener's.
func startHAProxy(t *testing.T, bin, backend, serverOptions string, collectors []collectorAddrs) (string, string) {
	t.Helper()
	front := freeAddr(t)
	var servers strings.Builder
	for i, c := range collectors {
		fmt.Fprintf(&servers, "  server replica%d %s%s\n", i, c.receiver, serverOptions)
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
listen stats
  bind %s
  stats enable
  stats uri /stats
  http-request return status 200 content-type text/plain string ok if { path /metrics }
backend collectors
  %s
%s`, front, stats, backend, servers.String())
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	check, err := exec.Command(bin, "-c", "-f", path).CombinedOutput()
	require.NoError(t, err, "haproxy -c:\n%s\n%s", check, config)
	startProcess(t, exec.Command(bin, "-db", "-f", path), stats)
	return front, stats
}

// startProcess starts cmd, waits until readyAddr answers HTTP, and stops
// it (SIGTERM, then SIGKILL) when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, readyAddr string) *os.Process {
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
			return cmd.Process
		}
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", cmd.Path, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not answer on %s:\n%s", cmd.Path, readyAddr, logs.String())
	return nil
}

// counters are one collector's numbers that the measurement reads.
type counters struct {
	linked, unlinked int
	accepted         int // samples the receiver passed to the pipeline
	posts            int // envelope POSTs answered
	held, unheld     int // chunks put on hold, and chunks whose hold ended
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
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if i := strings.LastIndex(line, "} "); i >= 0 {
			series, value, ok = line[:i+1], line[i+2:], true
		}
		if !ok {
			continue
		}
		name, labels, _ := strings.Cut(series, "{")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return c, fmt.Errorf("metric line %q: %w", line, err)
		}
		c.add(name, labels, int(v))
	}
	return c, sc.Err()
}

func (c *counters) add(name, labels string, v int) {
	switch {
	case name == "otelcol_receiver_sentryprofile_linked_samples" || name == "otelcol_receiver_sentryprofile_linked_samples_total":
		if strings.Contains(labels, `linked="true"`) {
			c.linked += v
		} else {
			c.unlinked += v
		}
	case strings.HasPrefix(name, "otelcol_receiver_accepted_profile_samples"):
		c.accepted += v
	case strings.HasPrefix(name, "otelcol_receiver_sentryprofile_link_held_chunks") && strings.Contains(labels, `hold="held"`):
		c.held += v
	case name == "otelcol_receiver_sentryprofile_link_hold_duration_count":
		c.unheld += v
	case strings.HasPrefix(name, "http_server_request_duration") && strings.HasSuffix(name, "_count") &&
		strings.Contains(labels, `http_request_method="POST"`):
		c.posts += v
	}
}

// frontendResponses reads HAProxy's stats CSV: the responses its Sentry
// frontend gave, by status class ("2xx", "5xx"…).
func frontendResponses(statsAddr string) (map[string]int, error) {
	resp, err := http.Get("http://" + statsAddr + "/stats;csv")
	if err != nil {
		return nil, fmt.Errorf("HAProxy stats: %w", err)
	}
	defer resp.Body.Close()
	r := csv.NewReader(resp.Body)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("HAProxy stats CSV: %w", err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("HAProxy stats CSV: %d rows, want a header and a row", len(rows))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.TrimPrefix(name, "# ")] = i
	}
	out := map[string]int{}
	for _, row := range rows[1:] {
		if row[col["pxname"]] != "sentry" || row[col["svname"]] != "FRONTEND" {
			continue
		}
		for _, class := range []string{"1xx", "2xx", "3xx", "4xx", "5xx"} {
			n, _ := strconv.Atoi(row[col["hrsp_"+class]])
			out[class] = n
		}
		return out, nil
	}
	return nil, fmt.Errorf("HAProxy stats: no FRONTEND row for sentry")
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

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// The harness of the real-SDK tests: each client runs against a built
// collector of its own (so that the collector's discard counters are the
// client's alone), through a recording proxy that keeps a decompressed copy
// of every request the SDK made.

const (
	// What every client is told to report, and what must come out.
	sdkPublicKey   = "e2e0public0key"
	sdkProject     = "42"
	sdkEnvironment = "e2e-ci"
	// sdkBusyMillis is how long each program keeps the CPU busy.
	sdkBusyMillis = 3000
	// envTable names a file TestSDKs writes its per-client table to, for
	// `make e2e` to print at the end.
	envTable = "E2E_TABLE"
)

// sdkEnv is what a client program is started with.
type sdkEnv struct {
	DSN         string
	Release     string
	Environment string
	BusyMillis  int
	Extra       []string // more NAME=value pairs, e.g. E2E_EVENTS=1
}

// vars renders e as the environment variables every client program reads.
func (e sdkEnv) vars() []string {
	return append([]string{
		"SENTRY_DSN=" + e.DSN,
		"E2E_RELEASE=" + e.Release,
		"E2E_ENVIRONMENT=" + e.Environment,
		"E2E_BUSY_MS=" + strconv.Itoa(e.BusyMillis),
	}, e.Extra...)
}

// sdkClient is one real SDK program.
type sdkClient struct {
	Name      string   // row of the table, subtest name, key of sharedSDKRun
	SDK       string   // package and version
	Mode      string   // what kind of profiles it sends and how
	Functions []string // function names of the program its profiles must hold
	// run starts the program against env.DSN and returns once it has sent
	// everything it will send; rec sees its requests as they arrive.
	run func(t *testing.T, env sdkEnv, rec *sdkRecorder)
}

// release is the release a client reports: distinct per client, so that a
// mix-up between runs cannot pass.
func (c sdkClient) release() string { return "e2e-" + c.Name + "@2.3.4" }

// collectorAddrs are the addresses a collector configuration is written for.
type collectorAddrs struct {
	Receiver string // host:port of the sentryprofile receiver
	Metrics  string // host:port of the collector's Prometheus endpoint
	Output   string // path of the file exporter's OTLP JSON lines
	Traces   string // path of the traces file exporter's OTLP JSON lines
}

// sdkRunOptions changes how runSDK runs a client; the zero value is what
// TestSDKs uses.
type sdkRunOptions struct {
	// Env adds NAME=value pairs to the program's environment.
	Env []string
	// Config writes the collector configuration; nil is sdkCollectorConfig.
	// A replacement must keep the receiver on a.Receiver and the
	// Prometheus reader on a.Metrics; the file exporter on a.Output is
	// optional (without it, Output stays empty).
	Config func(a collectorAddrs) string
}

// sdkRun is what one client run produced.
type sdkRun struct {
	Client   sdkClient
	Env      sdkEnv
	Requests []recordedRequest // every request the SDK made, bodies decompressed, in arrival order
	Sent     sentItems         // what the envelope POSTs carried, counted here
	Output   []pprofile.Profiles
	Got      profilesSummary // summary of Output
	// SentSpans are the spans of the SDK's transaction and span items;
	// OutSpans those of the traces pipeline's output.
	SentSpans []sentSpan
	OutSpans  []outSpan
	// ChunkSamples are the V2 chunk samples sent; LinkedSamples those that
	// ran under a span (checkSDKLinks).
	ChunkSamples, LinkedSamples int
	Metrics                     receiverMetrics // the collector's own counters after the run
	Elapsed                     time.Duration   // the program's run time
}

// Posts returns the envelope requests of the run (a browser may also send
// CORS preflights, which carry nothing).
func (r *sdkRun) Posts() []recordedRequest {
	var out []recordedRequest
	for _, req := range r.Requests {
		if req.Method == http.MethodPost {
			out = append(out, req)
		}
	}
	return out
}

// sdkCollectorConfig is the collector every client runs against: the
// receiver restricted to the clients' key and project, CORS open to pages
// served from loopback (the browser clients post cross-origin), the file
// exporter, and the collector's own metrics on a Prometheus endpoint.
func sdkCollectorConfig(a collectorAddrs) string {
	host, port, _ := strings.Cut(a.Metrics, ":")
	return fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %q
    public_keys: [%q]
    projects: [%q]
    cors:
      allowed_origins: ["http://127.0.0.1:*"]
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
  file/traces:
    path: %q
    format: json
    flush_interval: 100ms
service:
  telemetry:
    logs:
      level: info
    metrics:
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
    traces:
      receivers: [sentryprofile]
      exporters: [file/traces]
`, a.Receiver, sdkPublicKey, sdkProject, a.Output, a.Traces, host, port)
}

// runSDK starts a built collector, runs client against it through a
// recording proxy, waits until every sample the SDK sent has reached the
// file exporter (or 30 s), and reads the collector's metrics. It fails t
// only where the run itself cannot go on; checkSDKRun judges the result.
func runSDK(t *testing.T, client sdkClient, opts sdkRunOptions) *sdkRun {
	t.Helper()
	bin := requireBinary(t)
	dir := t.TempDir()
	addrs := collectorAddrs{
		Receiver: testnet.FreeLoopbackAddr(t),
		Metrics:  testnet.FreeLoopbackAddr(t),
		Output:   filepath.Join(dir, "profiles.jsonl"),
		Traces:   filepath.Join(dir, "traces.jsonl"),
	}
	write := opts.Config
	if write == nil {
		write = sdkCollectorConfig
	}
	config := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(write(addrs)), 0o600))
	c := startCollector(t, bin, nil, "--config", config, profilesGate)
	c.waitListening(t, addrs.Receiver)
	c.waitListening(t, addrs.Metrics)
	rec, proxyAddr := newSDKRecorder(t, addrs.Receiver)

	env := sdkEnv{
		DSN:         fmt.Sprintf("http://%s@%s/%s", sdkPublicKey, proxyAddr, sdkProject),
		Release:     client.release(),
		Environment: sdkEnvironment,
		BusyMillis:  sdkBusyMillis,
		Extra:       opts.Env,
	}
	started := time.Now()
	client.run(t, env, rec)
	run := &sdkRun{Client: client, Env: env, Elapsed: time.Since(started)}

	reqs, err := rec.snapshot()
	require.NoError(t, err, "the recording proxy")
	run.Requests = reqs
	for i, r := range run.Posts() {
		require.NoError(t, readProfileItems(r.Body, &run.Sent), "%s: request %d (%s)", client.Name, i, r.Path)
		spans, err := readSentSpans(r.Body)
		require.NoError(t, err, "%s: request %d (%s)", client.Name, i, r.Path)
		run.SentSpans = append(run.SentSpans, spans...)
	}

	// The receiver answers once the pipeline took the data and the file
	// exporter flushes every 100 ms; the wait absorbs that. It ends when
	// every profile item is either out (a line of the file holds whole
	// profiles) or counted as discarded, or after 30 s: the result is
	// reported as it is, for checkSDKRun to judge.
	want := run.Sent.Samples()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pds, err := readJSONLines(addrs.Output)
		require.NoError(t, err)
		run.Output, run.Got = pds, summarize(pds...)
		if run.OutSpans, err = readTraceLines(addrs.Traces); err != nil {
			require.NoError(t, err)
		}
		run.Metrics, err = scrapeReceiverMetrics(addrs.Metrics)
		require.NoError(t, err)
		// confighttp records a request's metrics as its handler returns,
		// which may be just after the SDK had the answer.
		answered := 0
		for _, n := range run.Metrics.Posts {
			answered += n
		}
		accounted := run.Got.Profiles+run.Metrics.DiscardedTotal() >= len(run.Sent.Profiles) &&
			answered >= len(run.Posts())
		spansOut := len(run.OutSpans)+run.Metrics.DiscardedTraceItems >= len(run.SentSpans) || addrs.Traces == ""
		if (run.Got.SampleEvents >= want && accounted && spansOut) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return run
}

// receiverMetrics are the collector's own counters that tell whether the
// receiver kept everything.
type receiverMetrics struct {
	Series    int            // otelcol_ series scraped: proof the endpoint answered for this collector
	Discarded map[string]int // otelcol_receiver_sentryprofile_discarded_items by reason
	Warnings  int            // item warnings (metadata accepted anyway), any reason
	Accepted  int            // otelcol_receiver_accepted_profile_samples
	Refused   int            // otelcol_receiver_{refused,failed}_profile_samples: the pipeline said no
	// DiscardedTraceItems counts trace items the receiver could not read;
	// RefusedSpans the spans the traces pipeline refused or failed.
	DiscardedTraceItems int
	RefusedSpans        int
	Posts               map[string]int // POSTs the receiver's HTTP server answered (confighttp's http_server_request_duration_count), by status code
	Receiver            []string       // every otelcol_receiver_sentryprofile_ series as scraped, for the log
}

// DiscardedTotal adds up the discarded items of every reason.
func (m receiverMetrics) DiscardedTotal() int {
	n := 0
	for _, v := range m.Discarded {
		n += v
	}
	return n
}

// scrapeReceiverMetrics reads the collector's Prometheus endpoint. Counters
// that never moved are absent, which reads as zero.
func scrapeReceiverMetrics(addr string) (receiverMetrics, error) {
	m := receiverMetrics{Discarded: map[string]int{}, Posts: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return m, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m, fmt.Errorf("scraping the collector's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return m, fmt.Errorf("scraping the collector's metrics: %s: %s", resp.Status, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "http_server_request_duration_count{") {
			_, labels, value, err := parseMetricLine(line)
			if err != nil {
				return m, err
			}
			if labels["http_request_method"] == http.MethodPost {
				m.Posts[labels["http_response_status_code"]] += int(value)
			}
			continue
		}
		if !strings.HasPrefix(line, "otelcol_") {
			continue
		}
		name, labels, value, err := parseMetricLine(line)
		if err != nil {
			return m, err
		}
		m.Series++
		if strings.HasPrefix(name, "otelcol_receiver_sentryprofile_") {
			m.Receiver = append(m.Receiver, line)
		}
		switch {
		case strings.HasPrefix(name, "otelcol_receiver_sentryprofile_discarded_trace_items"):
			m.DiscardedTraceItems += int(value)
		case strings.HasPrefix(name, "otelcol_receiver_refused_spans"),
			strings.HasPrefix(name, "otelcol_receiver_failed_spans"):
			m.RefusedSpans += int(value)
		case strings.HasPrefix(name, "otelcol_receiver_sentryprofile_discarded_items"):
			m.Discarded[labels["reason"]] += int(value)
		case strings.HasPrefix(name, "otelcol_receiver_sentryprofile_") && strings.Contains(name, "warning"):
			m.Warnings += int(value)
		case strings.HasPrefix(name, "otelcol_receiver_accepted_profile_samples"):
			m.Accepted += int(value)
		case strings.HasPrefix(name, "otelcol_receiver_refused_profile_samples"),
			strings.HasPrefix(name, "otelcol_receiver_failed_profile_samples"):
			m.Refused += int(value)
		}
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("reading the collector's metrics: %w", err)
	}
	if m.Series == 0 {
		return m, fmt.Errorf("the collector's metrics endpoint %s has no otelcol_ series", addr)
	}
	return m, nil
}

// parseMetricLine reads one sample line of the Prometheus text format:
// name{label="value",...} value [timestamp].
func parseMetricLine(line string) (string, map[string]string, float64, error) {
	labels := map[string]string{}
	var name, rest string
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", nil, 0, fmt.Errorf("metric line %q: unbalanced braces", line)
		}
		name, rest = line[:i], strings.TrimSpace(line[j+1:])
		for _, pair := range splitLabels(line[i+1 : j]) {
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				continue
			}
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			labels[k] = v
		}
	} else {
		name, rest, _ = strings.Cut(line, " ")
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, fmt.Errorf("metric line %q: no value", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", nil, 0, fmt.Errorf("metric line %q: %w", line, err)
	}
	return name, labels, v, nil
}

// splitLabels splits the inside of a label set at the commas outside
// quoted values.
func splitLabels(s string) []string {
	var out []string
	inQuote, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inQuote = !inQuote
		case c == ',' && !inQuote:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// sharedRuns keeps one run of each client per test process, so that a test
// asking for a client's default run again reuses it instead of running the
// program again. It is test-process state by design: a run takes seconds of
// CPU on a shared 2-core machine.
var sharedRuns = &sdkRunCache{runs: map[string]*sdkRun{}, locks: map[string]*sync.Mutex{}}

type sdkRunCache struct {
	mu    sync.Mutex
	runs  map[string]*sdkRun
	locks map[string]*sync.Mutex
}

// get returns the run of client with default options, running it now
// (under t) if no test of this process has. Only runs that completed are
// kept, so a failed run is retried.
func (c *sdkRunCache) get(t *testing.T, client sdkClient) *sdkRun {
	t.Helper()
	c.mu.Lock()
	lock, ok := c.locks[client.Name]
	if !ok {
		lock = &sync.Mutex{}
		c.locks[client.Name] = lock
	}
	c.mu.Unlock()

	lock.Lock()
	defer lock.Unlock()
	c.mu.Lock()
	run, ok := c.runs[client.Name]
	c.mu.Unlock()
	if ok {
		return run
	}
	run = runSDK(t, client, sdkRunOptions{})
	c.mu.Lock()
	c.runs[client.Name] = run
	c.mu.Unlock()
	return run
}

// sdkTable renders one line per run: what the SDK sent, what came out, and
// what the collector counted as discarded.
// A client whose run did not complete has a row of its own that says so.
func sdkTable(clients []sdkClient, runs map[string]*sdkRun, failed map[string]bool) string {
	var b strings.Builder
	header := []string{"client", "sdk", "mode", "requests", "items sent", "profile items", "samples sent", "samples out", "spans sent", "spans out", "linked", "discarded", "warnings", "threads", "run", "result"}
	rows := [][]string{header}
	for _, c := range clients {
		r, ok := runs[c.Name]
		if !ok {
			row := make([]string, len(header))
			row[0], row[1], row[2], row[len(row)-1] = c.Name, c.SDK, c.Mode, "not run"
			if failed[c.Name] {
				row[len(row)-1] = "FAIL (no run)"
			}
			rows = append(rows, row)
			continue
		}
		result := "ok"
		if failed[c.Name] {
			result = "FAIL"
		}
		rows = append(rows, []string{
			r.Client.Name, r.Client.SDK, r.Client.Mode,
			strconv.Itoa(len(r.Posts())), itemSummary(r.Sent.Items),
			strconv.Itoa(len(r.Sent.Profiles)), strconv.Itoa(r.Sent.Samples()), strconv.Itoa(r.Got.SampleEvents),
			strconv.Itoa(len(r.SentSpans)), strconv.Itoa(len(r.OutSpans)), linkedShare(r),
			strconv.Itoa(r.Metrics.DiscardedTotal()), strconv.Itoa(r.Metrics.Warnings),
			strconv.Itoa(len(r.Got.Threads)), r.Elapsed.Round(100 * time.Millisecond).String(), result,
		})
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	for n, row := range rows {
		for i, cell := range row {
			fmt.Fprintf(&b, "| %-*s ", widths[i], cell)
		}
		b.WriteString("|\n")
		if n == 0 {
			for i := range row {
				b.WriteString("|" + strings.Repeat("-", widths[i]+2))
			}
			b.WriteString("|\n")
		}
	}
	return b.String()
}

// linkedShare renders the share of chunk samples that ran under a span.
func linkedShare(r *sdkRun) string {
	if r.ChunkSamples == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", r.LinkedSamples, r.ChunkSamples, 100*float64(r.LinkedSamples)/float64(r.ChunkSamples))
}

// itemSummary renders item counts by type, e.g. "profile_chunk:1 span:17".
func itemSummary(items map[string]int) string {
	types := make([]string, 0, len(items))
	for typ := range items {
		types = append(types, typ)
	}
	sort.Strings(types)
	parts := make([]string, len(types))
	for i, typ := range types {
		parts[i] = fmt.Sprintf("%s:%d", typ, items[typ])
	}
	return strings.Join(parts, " ")
}

// sharedSDKRun returns the run of the client named name with default
// options, running it now (under t) if no test of this process has.
// Only runs that completed are kept, so a failed run is retried.
func sharedSDKRun(t *testing.T, name string) *sdkRun {
	t.Helper()
	client, ok := sdkClientByName(name)
	if !ok {
		t.Fatalf("no SDK client named %q", name)
	}
	return sharedRuns.get(t, client)
}

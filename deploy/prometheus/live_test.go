package prometheus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveFiring are the alerts the live set-up provokes, and with what.
var liveFiring = map[string]string{
	"SentryprofileProfileItemsDiscarded":  "an unreadable profile_chunk item",
	"SentryprofileSignalItemsDiscarded":   "unreadable event and transaction items",
	"SentryprofileUnlinkedSamples":        "V2 chunks whose profiler sent no spans",
	"SentryprofileRefusing":               "the logs pipeline's memory_limiter; the rate-limited exporter's full queue",
	"SentryprofileMemoryLimiterRefusing":  "a 4 MiB memory_limiter on the logs pipeline",
	"SentryprofileSDKDiscards":            "a client report of queue_overflow",
	"SentryprofileLinkHoldFull":           "links::max_held_chunks: 1",
	"SentryprofileSpanIndexEvicting":      "a profiled transaction with two child spans, links::max_spans_per_profiler: 1",
	"SentryprofileUpstreamFailing":        "the upstream answering 503",
	"SentryprofileSpoolNotDraining":       "the upstream answering 503",
	"SentryprofileSpoolDroppedFull":       "spool_max_bytes: 200000 while the upstream is down",
	"SentryprofileSpoolDroppedByUpstream": "the recovered upstream refusing project 2 (400)",
	"SentryprofileExporterDropping":       "Sentry answering 403",
	"SentryprofileExporterSendFailed":     "Sentry answering 403 (a permanent error)",
	"SentryprofileExporterQueueFull":      "Sentry answering 429 for 60 s to an exporter with a queue of 2",
}

// liveSilent are alerts whose thresholds the test does not reach: their
// series must have data, and they must never fire.
var liveSilent = map[string]string{
	"SentryprofileSpoolFilling": "200 kB spooled, the threshold is 512 MiB",
	"SentryprofileSpoolOld":     "requests wait seconds, the threshold is 5 min",
	"SentryprofileMemoryHigh":   "the collector's RSS is far below 460 MiB",
}

// liveResolves are alerts that must stop firing once the upstream is back.
var liveResolves = []string{"SentryprofileSpoolNotDraining"}

// notScraped are the collector metrics the rules read that this set-up
// never makes the collector export (it only exports a counter once it
// moved): the memory_limiter guards the logs pipeline only, and nothing
// refuses metrics or spans. They are checked to stay absent, so that the
// list stays true; the others must be in the scrape.
var notScraped = map[string]string{
	"otelcol_processor_memory_limiter_refused_spans":         "no memory_limiter on traces",
	"otelcol_processor_memory_limiter_refused_metric_points": "no memory_limiter on metrics",
}

// probe is one query the live test puts to Prometheus' HTTP API.
type probe struct {
	what, query string
	wantData    bool // false: must never return data
	max         int  // most series one answer held
	first       time.Duration
}

// TestLive runs a real Prometheus against the built collector: while
// envelopes are replayed into the collector, every recording rule's
// expression and recorded series, every dashboard panel's query and the
// expression of every alert expected to fire must return data through
// /api/v1/query, the expected alerts must fire (/api/v1/alerts, with
// `for:` shortened to 1 s in a copy of the rules) and the others never.
// It logs what it measured as a table (ALERTS_LIVE_TABLE=<file> writes it
// there too); ALERTS_LIVE_SCRAPE=1 also logs the receiver's metrics as the
// collector served them at the end.
func TestLive(t *testing.T) {
	promBin := tool(t, "prometheus", "a real Prometheus evaluates the rules")
	bin := collectorBin(t)
	real := realEnvelopes(t)
	f := loadRules(t)
	d := loadDashboard(t)
	for _, a := range f.alerts() {
		_, fires := liveFiring[a.Alert]
		_, silent := liveSilent[a.Alert]
		require.NotEqual(t, fires, silent, "%s: in exactly one of liveFiring and liveSilent", a.Alert)
	}
	started := time.Now()

	up := newUpstream(t)
	sentry := newSentry(t)
	col := startCollector(t, bin, up.URL, sentry.URL)
	rulesFile := testCopy(t, f, t.TempDir(), func(r *rule) {
		if r.Alert != "" {
			r.For = "1s"
		}
	})
	api := startPrometheus(t, promBin, rulesFile, col.metrics)
	t.Logf("collector and Prometheus ready after %s", time.Since(started).Round(time.Millisecond))

	probes := liveProbes(f, d)
	// The V2 chunks go twice per round: two thirds of the samples then come
	// without spans, as behind a round-robin balancer, and the unlinked
	// share stays clear of the alert's 50%.
	mix := append(slices.Clone(real), craftedEnvelopes(time.Now(), real)...)
	for _, e := range real {
		if strings.Contains(e.name, "profile_chunk") {
			mix = append(mix, e)
		}
	}
	r := replay(col.receiver, mix, 100*time.Millisecond)
	defer r.finish()

	loopStart := time.Now()
	run := &liveRun{t: t, api: api, up: up, probes: probes, firing: map[string]time.Duration{}, resolved: map[string]time.Duration{}}
	for deadline := loopStart.Add(4 * time.Minute); !run.poll(time.Since(loopStart)) && time.Now().Before(deadline); {
		time.Sleep(time.Second)
	}
	answers := r.finish()
	run.check()
	checkScrape(t, f, col.metrics)

	t.Logf("upstream requests %d; envelopes sent %d, answers by status %v", up.requests.Load(), r.sent.Load(), answers)
	t.Logf("live run: %s after the processes were ready, %s in all", time.Since(loopStart).Round(time.Second), time.Since(started).Round(time.Second))
	report := liveReport(probes, run.firing)
	t.Log("\n" + report)
	if out := os.Getenv("ALERTS_LIVE_TABLE"); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(report), 0o644))
	}
}

// liveRun is the state of the live test's polling: what each probe and
// the alerts API answered so far.
type liveRun struct {
	t                *testing.T
	api              string
	up               *upstream
	probes           []*probe
	firing, resolved map[string]time.Duration // when each alert first fired, resolved
	recoveredAt      time.Duration            // when the upstream came back; 0 before
}

// poll asks every probe and the alerts once; it brings the upstream back
// once the outage has shown (5xx counted, the spool full and not
// draining) and reports whether everything expected has been seen.
func (l *liveRun) poll(elapsed time.Duration) bool {
	t := l.t
	for _, p := range l.probes {
		n, err := seriesCount(l.api, p.query)
		require.NoError(t, err, "%s: %s", p.what, p.query)
		if n > p.max {
			p.max = n
		}
		if n > 0 && p.first == 0 {
			p.first = elapsed
		}
	}
	active, err := firingAlerts(l.api)
	require.NoError(t, err)
	for name := range active {
		if _, seen := l.firing[name]; !seen {
			l.firing[name] = elapsed
			t.Logf("%6.1fs %s fires", elapsed.Seconds(), name)
		}
		if why, silent := liveSilent[name]; silent {
			t.Fatalf("%s fired, but %s", name, why)
		}
	}
	if l.recoveredAt == 0 && has(l.firing, "SentryprofileUpstreamFailing", "SentryprofileSpoolNotDraining", "SentryprofileSpoolDroppedFull") {
		l.up.recover()
		l.recoveredAt = elapsed
		t.Logf("%6.1fs the upstream recovers", elapsed.Seconds())
	}
	if l.recoveredAt > 0 {
		for _, name := range liveResolves {
			if _, ok := l.resolved[name]; !ok && !active[name] && elapsed > l.recoveredAt+2*time.Second {
				l.resolved[name] = elapsed
				t.Logf("%6.1fs %s resolved", elapsed.Seconds(), name)
			}
		}
	}
	return liveDone(l.probes, l.firing, l.resolved)
}

// check asserts what the run saw: data from every probe that should have
// it and none from the others, every expected alert fired, the resolving
// ones resolved.
func (l *liveRun) check() {
	t := l.t
	for _, p := range l.probes {
		if p.wantData {
			assert.Positive(t, p.max, "%s returned no data: %s", p.what, p.query)
		} else {
			assert.Zero(t, p.max, "%s returned data: %s", p.what, p.query)
		}
	}
	for name, why := range liveFiring {
		assert.Contains(t, l.firing, name, "%s did not fire (%s)", name, why)
	}
	for _, name := range liveResolves {
		assert.Contains(t, l.resolved, name, "%s did not resolve after the upstream recovered", name)
	}
}

// liveProbes lists the queries: each recording rule's expression and its
// recorded series, each alert's expression (data expected only for the
// alerts the set-up provokes), each panel's query with the job variable
// at "All".
func liveProbes(f *ruleFile, d *dashboard) []*probe {
	var out []*probe
	for _, r := range f.records() {
		out = append(out,
			&probe{what: "record " + r.Record + " (expression)", query: r.Expr, wantData: true},
			&probe{what: "record " + r.Record, query: r.Record, wantData: true})
	}
	for _, a := range f.alerts() {
		_, fires := liveFiring[a.Alert]
		out = append(out, &probe{what: "alert " + a.Alert, query: a.Expr, wantData: fires})
	}
	titles := d.queries()
	names := make([]string, 0, len(titles))
	for title := range titles {
		names = append(names, title)
	}
	sort.Strings(names)
	for _, title := range names {
		for _, q := range titles[title] {
			out = append(out, &probe{what: "panel " + title, query: panelQuery(q), wantData: true})
		}
	}
	return out
}

func liveDone(probes []*probe, firing, resolved map[string]time.Duration) bool {
	for _, p := range probes {
		if p.wantData && p.max == 0 {
			return false
		}
	}
	for name := range liveFiring {
		if _, ok := firing[name]; !ok {
			return false
		}
	}
	return len(resolved) == len(liveResolves)
}

func has(m map[string]time.Duration, names ...string) bool {
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return false
		}
	}
	return true
}

// seriesCount asks /api/v1/query and returns how many series the answer
// holds.
func seriesCount(api, query string) (int, error) {
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string            `json:"resultType"`
			Result     []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := getJSON(api+"/api/v1/query?"+url.Values{"query": {query}}.Encode(), &body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("query %q: %s", query, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return 0, fmt.Errorf("query %q: a %s, not a vector", query, body.Data.ResultType)
	}
	return len(body.Data.Result), nil
}

// firingAlerts reads /api/v1/alerts: the names of the alerts firing now.
func firingAlerts(api string) (map[string]bool, error) {
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := getJSON(api+"/api/v1/alerts", &body); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, a := range body.Data.Alerts {
		if a.State == "firing" {
			out[a.Labels["alertname"]] = true
		}
	}
	return out, nil
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s (HTTP %d): %w", u, resp.StatusCode, err)
	}
	return nil
}

// checkScrape reads the collector's own endpoint once more and checks the
// raw names the recording rules read against it.
func checkScrape(t *testing.T, f *ruleFile, metricsAddr string) {
	t.Helper()
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	scraped := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		scraped[name] = true
		if os.Getenv("ALERTS_LIVE_SCRAPE") != "" && strings.HasPrefix(name, "otelcol_receiver") {
			t.Log(line)
		}
	}
	require.NoError(t, sc.Err())
	for _, r := range f.records() {
		for _, name := range rawMetric.FindAllString(r.Expr, -1) {
			if why, ok := notScraped[name]; ok {
				assert.False(t, scraped[name], "%s is scraped after all; remove it from notScraped (%s)", name, why)
				continue
			}
			assert.True(t, scraped[name], "%s (read by %s) is not in the collector's scrape", name, r.Record)
		}
	}
}

// liveReport is the table of what the live run measured.
func liveReport(probes []*probe, firing map[string]time.Duration) string {
	var b strings.Builder
	b.WriteString("| query | series (most) | first data after |\n|---|---|---|\n")
	for _, p := range probes {
		first := "never"
		if p.max > 0 {
			first = fmt.Sprintf("%.0f s", p.first.Seconds())
		}
		fmt.Fprintf(&b, "| %s | %d | %s |\n", p.what, p.max, first)
	}
	names := make([]string, 0, len(firing))
	for n := range firing {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("\n| alert | fired after |\n|---|---|\n")
	for _, n := range names {
		fmt.Fprintf(&b, "| %s | %.0f s |\n", n, firing[n].Seconds())
	}
	return b.String()
}

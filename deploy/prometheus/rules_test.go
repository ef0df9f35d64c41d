package prometheus

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// TestRulesShape checks what promtool does not: names, severities,
// annotations, and that alerts judge recorded series only, so that the
// dashboard (which draws the recorded series) shows what each alert sees.
func TestRulesShape(t *testing.T) {
	f := loadRules(t)
	records := map[string]bool{}
	for _, r := range f.records() {
		assert.False(t, records[r.Record], "recording rule %s twice", r.Record)
		records[r.Record] = true
		assert.Regexp(t, `^[a-z_]+:otelcol_[a-z0-9_]+:[a-z0-9_]+$`, r.Record, "level:metric:operations")
		assert.Empty(t, r.For, "%s: a recording rule has no for", r.Record)
	}
	alerts := map[string]bool{}
	for _, a := range f.alerts() {
		t.Run(a.Alert, func(t *testing.T) {
			assert.False(t, alerts[a.Alert], "alert twice")
			alerts[a.Alert] = true
			assert.True(t, strings.HasPrefix(a.Alert, "Sentryprofile"), "named Sentryprofile…")
			assert.Contains(t, []string{"critical", "warning", "info"}, a.Labels["severity"])
			assert.NotEmpty(t, a.Annotations["summary"])
			assert.NotEmpty(t, a.Annotations["description"])
			assert.NotRegexp(t, `otelcol_[a-z]`, stripRecorded(a.Expr),
				"an alert reads recorded series only, not the collector's raw metrics")
			used := recordedIn(a.Expr)
			require.NotEmpty(t, used, "an alert judges a recorded series")
			for _, name := range used {
				assert.True(t, records[name], "%s is not a recording rule", name)
			}
		})
	}
}

// TestOperationsGuideNamesEveryAlert keeps the guide's table in step with
// the rules: each alert is named in docs/operations.md, and no name there
// is missing from the rules.
func TestOperationsGuideNamesEveryAlert(t *testing.T) {
	data, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	guide := string(data)
	alerts := map[string]bool{}
	for _, a := range loadRules(t).alerts() {
		alerts[a.Alert] = true
		assert.Contains(t, guide, "`"+a.Alert+"`", "docs/operations.md does not name %s", a.Alert)
	}
	for _, name := range regexp.MustCompile("`(Sentryprofile[A-Za-z]+)`").FindAllStringSubmatch(guide, -1) {
		assert.True(t, alerts[name[1]], "docs/operations.md names %s, which rules.yaml does not have", name[1])
	}
}

var recordedToken = regexp.MustCompile(`[a-z_]+:[a-z0-9_]+:[a-z0-9_]+`)

func recordedIn(expr string) []string { return recordedToken.FindAllString(expr, -1) }
func stripRecorded(expr string) string {
	return recordedToken.ReplaceAllString(expr, "")
}

// rawMetric is a collector metric as an expression names it: the
// Prometheus exposition's name, with its type suffix.
var rawMetric = regexp.MustCompile(`otelcol_[a-z0-9_]+`)

// TestComponentMetricNames checks the receiver's and exporter's metric
// names in the recording rules against their generated documentation.md,
// with the suffix the collector's Prometheus endpoint gives each type:
// none for a sum (it serves the text format without `_total`, and
// Prometheus stores the names as served), `_bucket`/`_count`/`_sum` for a
// histogram. (The collector core's names are checked against a real
// scrape by TestLive.)
func TestComponentMetricNames(t *testing.T) {
	documented := map[string]string{}
	for _, doc := range []string{"../../sentryprofilereceiver/documentation.md", "../../sentryprofileexporter/documentation.md"} {
		for name, kind := range documentedMetrics(t, doc) {
			documented[name] = kind
		}
	}
	require.NotEmpty(t, documented)
	f := loadRules(t)
	checked := 0
	for _, r := range f.records() {
		for _, name := range rawMetric.FindAllString(r.Expr, -1) {
			if !strings.HasPrefix(name, "otelcol_receiver_sentryprofile_") && !strings.HasPrefix(name, "otelcol_exporter_sentryprofile_") {
				continue
			}
			checked++
			base, suffix := splitSuffix(name)
			kind, ok := documented[base]
			if !assert.True(t, ok, "%s (in %s): %s is not in documentation.md", name, r.Record, base) {
				continue
			}
			assert.Contains(t, suffixesFor[kind], suffix, "%s is a %s", name, kind)
		}
	}
	assert.GreaterOrEqual(t, checked, 12, "the rules read the components' own metrics")
}

var suffixesFor = map[string][]string{
	"counter":   {""},
	"gauge":     {""},
	"histogram": {"_bucket", "_count", "_sum"},
}

func splitSuffix(name string) (string, string) {
	for _, s := range []string{"_total", "_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, s); ok {
			return base, s
		}
	}
	return name, ""
}

// documentedMetrics reads mdatagen's documentation.md: each `### name`
// heading and the first row of the table under it (Unit, Metric Type,
// Value Type[, Monotonic]).
func documentedMetrics(t *testing.T, path string) map[string]string {
	t.Helper()
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	out := map[string]string{}
	name, rows := "", 0
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "### "); ok {
			name, rows = strings.TrimSpace(n), 0
			continue
		}
		if name == "" || !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		if rows != 3 { // header, separator, then the row
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cells[1] == "Histogram":
			out[name] = "histogram"
		case cells[1] == "Sum" && len(cells) > 3 && cells[3] == "true":
			out[name] = "counter"
		default:
			out[name] = "gauge"
		}
		name = ""
	}
	require.NoError(t, sc.Err())
	return out
}

// TestThresholdsMatchManifests ties the thresholds that depend on a
// deployment to deploy/kubernetes: the spool alert at half of the
// relay-through spool_max_bytes, the memory alert at 90% of every
// workload's memory limit. A change there fails here until the rules
// follow.
func TestThresholdsMatchManifests(t *testing.T) {
	thresholds := map[string]float64{}
	for _, a := range loadRules(t).alerts() {
		if _, v, ok := alertThreshold(a.Expr); ok {
			thresholds[a.Alert] = v
		}
	}

	var cm struct {
		Data map[string]string `json:"data"`
	}
	readYAML(t, "../kubernetes/relay-through/configmap.yaml", &cm)
	var cfg struct {
		Receivers struct {
			Sentry struct {
				Forward struct {
					SpoolMaxBytes float64 `json:"spool_max_bytes"`
				} `json:"forward"`
			} `json:"sentryprofile"`
		} `json:"receivers"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg))
	spool := cfg.Receivers.Sentry.Forward.SpoolMaxBytes
	require.Positive(t, spool, "relay-through sets spool_max_bytes")
	// Thresholds are byte counts: within half a byte is the same threshold.
	assert.InDelta(t, spool/2, thresholds["SentryprofileSpoolFilling"], 0.5, "half of spool_max_bytes")

	for _, workload := range []string{"../kubernetes/base/deployment.yaml", "../kubernetes/relay-through/statefulset.yaml"} {
		limit := memoryLimit(t, workload)
		assert.InDelta(t, math.Floor(0.9*float64(limit)), thresholds["SentryprofileMemoryHigh"], 0.5, "90%% of %s's limits.memory", workload)
	}
}

func memoryLimit(t *testing.T, path string) int64 {
	t.Helper()
	var w struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name      string `json:"name"`
						Resources struct {
							Limits map[string]string `json:"limits"`
						} `json:"resources"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	readYAML(t, path, &w)
	require.Len(t, w.Spec.Template.Spec.Containers, 1, "%s: one container", path)
	q, err := resource.ParseQuantity(w.Spec.Template.Spec.Containers[0].Resources.Limits["memory"])
	require.NoError(t, err, "%s: limits.memory", path)
	return q.Value()
}

// readYAML reads the first document of a YAML file (the workloads' files
// hold one object each).
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(data), "\n---")
	require.NoError(t, yaml.Unmarshal([]byte(first), v), "%s", path)
}

// TestPromtoolCheck runs `promtool check rules` on rules.yaml: syntax,
// PromQL, label and annotation templates.
func TestPromtoolCheck(t *testing.T) {
	promtool := tool(t, "promtool", "promtool checks the rules")
	out, err := exec.Command(promtool, "check", "rules", rulesPath).CombinedOutput()
	require.NoError(t, err, "promtool check rules:\n%s", out)
	f := loadRules(t)
	assert.Contains(t, string(out), "SUCCESS: "+strconv.Itoa(len(f.records())+len(f.alerts()))+" rules found")
}

// promtoolTests is the part of rules_test.yaml read to check its coverage.
type promtoolTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			EvalTime  string           `json:"eval_time"`
			Alertname string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestPromtoolUnit runs rules_test.yaml with `promtool test rules`
// against a copy of rules.yaml without annotations (see the file's
// header), after checking that it covers every alert both ways: an
// evaluation where it fires and one where it stays silent.
func TestPromtoolUnit(t *testing.T) {
	f := loadRules(t)
	data, err := os.ReadFile(rulesTestPath)
	require.NoError(t, err)
	var tests promtoolTests
	require.NoError(t, yaml.Unmarshal(data, &tests), "%s", rulesTestPath)
	require.Equal(t, []string{rulesPath}, tests.RuleFiles)
	fires, silent := map[string]int{}, map[string]int{}
	for _, group := range tests.Tests {
		for _, at := range group.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname]++
			} else {
				silent[at.Alertname]++
			}
		}
	}
	for _, a := range f.alerts() {
		assert.Positive(t, fires[a.Alert], "%s: no case where it fires", a.Alert)
		assert.Positive(t, silent[a.Alert], "%s: no case where it stays silent", a.Alert)
	}

	promtool := tool(t, "promtool", "promtool runs the rules' unit tests")
	dir := t.TempDir()
	testCopy(t, f, dir, func(r *rule) { r.Annotations = nil })
	require.NoError(t, os.WriteFile(filepath.Join(dir, rulesTestPath), data, 0o600))
	cmd := exec.Command(promtool, "test", "rules", rulesTestPath)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool test rules:\n%s", out)
	assert.Contains(t, string(out), "SUCCESS")
	t.Logf("promtool test rules: %d alerts, %d firing and %d silent evaluations", len(f.alerts()), sum(fires), sum(silent))
}

// TestPromtoolUnitCatchesBrokenRule proves the unit tests can fail: the
// same tests against rules whose thresholds are shifted must not pass.
func TestPromtoolUnitCatchesBrokenRule(t *testing.T) {
	promtool := tool(t, "promtool", "promtool runs the rules' unit tests")
	f := loadRules(t)
	data, err := os.ReadFile(rulesTestPath)
	require.NoError(t, err)
	cases := []struct {
		name string
		edit func(*rule)
	}{
		{"every for longer than the tests", func(r *rule) {
			r.Annotations = nil
			if r.For != "" {
				r.For = "59m"
			}
		}},
		{"comparisons inverted", func(r *rule) {
			r.Annotations = nil
			if r.Alert != "" {
				r.Expr = strings.Replace(r.Expr, " > ", " <= ", 1)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testCopy(t, f, dir, tc.edit)
			require.NoError(t, os.WriteFile(filepath.Join(dir, rulesTestPath), data, 0o600))
			cmd := exec.Command(promtool, "test", "rules", rulesTestPath)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "promtool test rules passed on broken rules:\n%s", out)
			failed := 0
			for _, a := range f.alerts() {
				if strings.Contains(string(out), "alertname: "+a.Alert+",") {
					failed++
				}
			}
			t.Logf("%d of %d alerts' tests failed", failed, len(f.alerts()))
			assert.Greater(t, failed, len(f.alerts())/2, "most alerts' tests notice:\n%s", out)
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

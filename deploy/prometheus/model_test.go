package prometheus

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The files under test, relative to this package.
const (
	rulesPath     = "rules.yaml"
	rulesTestPath = "rules_test.yaml"
	dashboardPath = "../grafana/sentryprofile.json"
)

// ruleFile is a Prometheus rule file as rules.yaml writes it.
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Record      string            `json:"record,omitempty"`
	Alert       string            `json:"alert,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func (f *ruleFile) records() []rule { return f.filter(func(r rule) bool { return r.Record != "" }) }
func (f *ruleFile) alerts() []rule  { return f.filter(func(r rule) bool { return r.Alert != "" }) }

func (f *ruleFile) filter(keep func(rule) bool) []rule {
	var out []rule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if keep(r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// loadRules reads rules.yaml strictly: a misspelled key fails here before
// promtool would ignore or refuse it.
func loadRules(t *testing.T) *ruleFile {
	t.Helper()
	data, err := os.ReadFile(rulesPath)
	require.NoError(t, err)
	var f ruleFile
	require.NoError(t, yaml.UnmarshalStrict(data, &f), "%s", rulesPath)
	require.NotEmpty(t, f.records(), "%s: recording rules", rulesPath)
	require.NotEmpty(t, f.alerts(), "%s: alerts", rulesPath)
	return &f
}

// testCopy writes rules.yaml into dir as rules.yaml again, changed by edit
// (each rule in turn): the copies promtool and the live Prometheus read.
func testCopy(t *testing.T, f *ruleFile, dir string, edit func(*rule)) string {
	t.Helper()
	c := ruleFile{Groups: make([]ruleGroup, len(f.Groups))}
	for i, g := range f.Groups {
		c.Groups[i] = ruleGroup{Name: g.Name, Rules: append([]rule(nil), g.Rules...)}
		for j := range c.Groups[i].Rules {
			edit(&c.Groups[i].Rules[j])
		}
	}
	out, err := yaml.Marshal(c)
	require.NoError(t, err)
	path := filepath.Join(dir, rulesPath)
	require.NoError(t, os.WriteFile(path, out, 0o600))
	return path
}

// recordedName matches a recording rule's name at the start of an
// expression or of a panel query, with its optional label matchers.
var recordedName = regexp.MustCompile(`^([a-z_]+:[a-z0-9_]+:[a-z0-9_]+)(\{[^}]*\})?`)

var thresholdAlert = regexp.MustCompile(`^([a-z_]+:[a-z0-9_]+:[a-z0-9_]+)(\{[^}]*\})? > ([0-9.e+]+)$`)

// alertThreshold splits an alert of the form `<recorded>{…} > <number>`
// into the recorded series it judges and its threshold; ok is false for
// other shapes (an `unless`, an aggregation first).
func alertThreshold(expr string) (record string, threshold float64, ok bool) {
	m := thresholdAlert.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return "", 0, false
	}
	return m[1], v, true
}

// dashboard is the part of a Grafana dashboard JSON the tests read.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
			AllValue   string          `json:"allValue"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit       string `json:"unit"`
			Thresholds struct {
				Steps []struct {
					Value *float64 `json:"value"`
				} `json:"steps"`
			} `json:"thresholds"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardPath)
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(data, &d), "%s", dashboardPath)
	return &d
}

// jobMatcher is the selector every panel query carries: the dashboard's
// `job` variable. The live test replaces the variable by what Grafana
// sends for "All" (allValue).
const jobMatcher = `job=~"$job"`

// panelQueries are the dashboard's queries, by panel title.
func (d *dashboard) queries() map[string][]string {
	out := map[string][]string{}
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			out[p.Title] = append(out[p.Title], target.Expr)
		}
	}
	return out
}

// tool returns the path of a command the test needs; without it the test
// skips with why, or fails when REQUIRE_TOOLS=1 (CI).
func tool(t *testing.T, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	missing(t, fmt.Sprintf("%s not found (%s; Debian: apt-get install prometheus)", name, why))
	return ""
}

// collectorBin is the built collector (`make build`), from OTELCOL_BIN.
// Without it the live test skips even under REQUIRE_TOOLS=1: OTELCOL_BIN
// is the switch of the suites that run the built collector (`make
// alerts-test` sets it; the module's unit run does not), not a tool.
func collectorBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_BIN")
	if bin == "" {
		t.Skip("OTELCOL_BIN is not set: the live test needs the built collector (`make alerts-test` builds and sets it)")
	}
	_, err := os.Stat(bin)
	require.NoError(t, err, "OTELCOL_BIN")
	return bin
}

func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("REQUIRE_TOOLS") == "1" {
		t.Fatalf("REQUIRE_TOOLS=1: %s", msg)
	}
	t.Skip(msg)
}

package prometheus

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDashboardMatchesRules holds the dashboard to the rules: every panel
// query is a recorded series of rules.yaml filtered by the `job` variable,
// every recorded series has its panel, and a panel whose series an alert
// compares with a non-zero threshold draws that threshold.
func TestDashboardMatchesRules(t *testing.T) {
	f := loadRules(t)
	d := loadDashboard(t)
	records := map[string]bool{}
	for _, r := range f.records() {
		records[r.Record] = true
	}
	thresholds := map[string]float64{}
	for _, a := range f.alerts() {
		if record, v, ok := alertThreshold(a.Expr); ok && v != 0 {
			thresholds[record] = v
		}
	}
	require.NotEmpty(t, thresholds)

	drawn := map[string]string{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			assert.Empty(t, p.Targets, "row %q has no queries", p.Title)
			continue
		}
		t.Run(p.Title, func(t *testing.T) {
			require.Len(t, p.Targets, 1, "one query per panel")
			expr := p.Targets[0].Expr
			m := recordedName.FindStringSubmatch(expr)
			require.NotNil(t, m, "%q is not a recorded series", expr)
			assert.Equal(t, expr, m[0], "the query is the recorded series and its selector, nothing else")
			assert.True(t, records[m[1]], "%s is not a recording rule of %s", m[1], rulesPath)
			assert.Equal(t, "{"+jobMatcher+"}", m[2], "filtered by the job variable")
			if other, ok := drawn[m[1]]; ok {
				t.Errorf("%s is drawn twice (%q and %q)", m[1], other, p.Title)
			}
			drawn[m[1]] = p.Title
			if want, ok := thresholds[m[1]]; ok {
				var steps []float64
				for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
					if s.Value != nil {
						steps = append(steps, *s.Value)
					}
				}
				assert.Contains(t, steps, want, "the alert's threshold is drawn")
			}
			require.NotNil(t, p.Datasource)
			assert.Equal(t, "${datasource}", p.Datasource.UID, "the datasource variable")
		})
	}
	for _, r := range f.records() {
		assert.Contains(t, drawn, r.Record, "%s has no panel", r.Record)
	}
}

// TestDashboardLayout checks what Grafana would silently misdraw: unique
// panel ids, panels inside the 24-column grid, no two panels overlapping,
// and the variables the queries use.
func TestDashboardLayout(t *testing.T) {
	d := loadDashboard(t)
	assert.NotEmpty(t, d.UID)
	ids := map[int]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	for _, p := range d.Panels {
		assert.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		g := p.GridPos
		assert.True(t, g.W > 0 && g.H > 0 && g.X >= 0 && g.X+g.W <= 24, "%q: gridPos %+v outside the 24-column grid", p.Title, g)
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("%q overlaps %q at %d,%d", p.Title, other, x, y)
					return
				}
				taken[cell{x, y}] = p.Title
			}
		}
	}
	var names []string
	for _, v := range d.Templating.List {
		names = append(names, v.Name)
		if v.Name == "job" {
			assert.Equal(t, ".+", v.AllValue, "All matches every job")
			assert.True(t, recordedName.MatchString(strings.TrimPrefix(v.Definition, "label_values(")),
				"the job variable's values come from a recorded series: %s", v.Definition)
		}
	}
	assert.Equal(t, []string{"datasource", "job"}, names)
	assert.True(t, slices.ContainsFunc(d.Panels, func(p panel) bool { return p.Type == "row" }), "rows group the panels")
}

// panelQuery is what Grafana sends for a panel's query with the job
// variable at "All".
func panelQuery(expr string) string {
	return strings.ReplaceAll(expr, "$job", ".+")
}

func TestPanelQuery(t *testing.T) {
	got := panelQuery(fmt.Sprintf("a:b:c{%s}", jobMatcher))
	assert.Equal(t, `a:b:c{job=~".+"}`, got)
}

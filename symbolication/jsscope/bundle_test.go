package jsscope

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap"
)

// bundlerDir holds the npm project that builds the real bundles.
const bundlerDir = "testdata/bundler"

type probe struct {
	Marker    string `json:"marker"`
	GenLine   int    `json:"genLine"`
	GenColumn int    `json:"genColumn"`
	// FnLine and FnColumn are where a profiler places the frame of the
	// minified function around the probe.
	FnLine    int    `json:"fnLine"`
	FnColumn  int    `json:"fnColumn"`
	Expected  string `json:"expected"`
	Rewritten string `json:"rewritten"`
}

type bundleExpectation struct {
	Probes  []probe `json:"probes"`
	DebugID string  `json:"debugId"`
}

// buildBundles builds the app with each bundler (testdata/bundler/build.mjs)
// and returns the output directory and the expectations node computed.
func buildBundles(t *testing.T) (string, map[string]bundleExpectation) {
	t.Helper()
	node := testenv.LookPath(t, "node", "nodejs")
	npm := testenv.LookPath(t, "npm", "npm")
	installModules(t, npm)
	out := t.TempDir()
	cmd := exec.Command(node, "build.mjs", out)
	cmd.Dir = bundlerDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, b)
	}
	var exp map[string]bundleExpectation
	b, err := os.ReadFile(filepath.Join(out, "expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &exp))
	return out, exp
}

// installModules runs npm ci when node_modules is missing or older than
// the lockfile (npm writes node_modules/.package-lock.json last).
func installModules(t testing.TB, npm string) {
	t.Helper()
	lock, err := os.Stat(filepath.Join(bundlerDir, "package-lock.json"))
	require.NoError(t, err)
	if done, err := os.Stat(filepath.Join(bundlerDir, "node_modules", ".package-lock.json")); err == nil && !done.ModTime().Before(lock.ModTime()) {
		return
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = bundlerDir
	if b, err := cmd.CombinedOutput(); err != nil {
		testenv.MissingTool(t, "npm ci in %s: %v\n%s", bundlerDir, err, b)
	}
}

// mapLookup adapts a parsed source map to a MapLookup.
func mapLookup(m *sourcemap.Map) MapLookup {
	return func(line, column int) (Mapping, bool) {
		t, ok := m.At(line, column)
		return Mapping{
			GenLine: t.GenLine, GenColumn: t.GenColumn, Source: t.Source,
			Line: t.Line, Column: t.Column, HasSource: t.HasSource, Name: t.Name,
		}, ok
	}
}

// TestRealBundles names the function of frames inside every function of
// an app bundled and minified by esbuild and by rollup with terser (each
// with Sentry's plugin injecting a debug id), against the enclosing
// function of the frame's original position that node computes with
// Mozilla's source-map and acorn. Each probe is two frames: an error's
// (the executing position, a string literal inside the function) and a
// profile's (where the profiler places the function: its parameter
// list). It also counts how many of the same frames the nearest named
// segment before the position (what symbolication/sourcemap answers
// today) names right.
func TestRealBundles(t *testing.T) {
	out, exp := buildBundles(t)
	for _, bundler := range []string{"esbuild", "rollup"} {
		t.Run(bundler, func(t *testing.T) {
			e, ok := exp[bundler]
			require.True(t, ok, "node built no %s bundle", bundler)
			assert.Len(t, e.DebugID, 36, "Sentry's plugin injected no debug id")
			require.NotEmpty(t, e.Probes)
			x, m := loadBundle(t, filepath.Join(out, bundler))
			var c probeCounts
			for _, p := range e.Probes {
				require.NotEmptyf(t, p.Expected, "node found no original function around %s", p.Marker)
				assert.Equalf(t, p.Marker, p.Expected, "node's expectation disagrees with the probe's own marker") //nolint:testifylint // neither is the actual: two sources of one expectation
				c.check(t, x, m, p)
			}
			t.Logf("%s: %d probes, %d in functions the bundler rewrote; error frames: scopes name %d right, the nearest named segment %d; "+
				"profile frames: scopes %d, the nearest named segment %d",
				bundler, len(e.Probes), c.rewritten, c.scope[0], c.nearest[0], c.scope[1], c.nearest[1])
			assert.Greater(t, c.scope[0]+c.scope[1], c.nearest[0]+c.nearest[1], "scope naming should beat the nearest named segment")
		})
	}
}

// loadBundle parses a built bundle and its map.
func loadBundle(t *testing.T, dir string) (*Index, *sourcemap.Map) {
	t.Helper()
	code, err := os.ReadFile(filepath.Join(dir, "index.js"))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, "index.js.map"))
	require.NoError(t, err)
	m, err := sourcemap.Parse(raw)
	require.NoError(t, err)
	x, err := Parse(code)
	require.NoError(t, err)
	return x, m
}

// probeCounts counts the right answers of each approach, for error
// frames [0] and profile frames [1].
type probeCounts struct {
	scope, nearest [2]int
	rewritten      int
}

// check names a probe's two frames both ways. A frame in a function the
// bundler rewrote (inlined into another, turned into an immediately called
// expression, a property hoisted into a variable) is counted, not
// asserted: the minified scope is no longer the original function.
func (c *probeCounts) check(t *testing.T, x *Index, m *sourcemap.Map, p probe) {
	t.Helper()
	frames := [2][2]int{{p.GenLine, p.GenColumn}, {p.FnLine, p.FnColumn}}
	var got [2]string
	for k, f := range frames {
		name, named := FunctionName(x, f[0], f[1], mapLookup(m))
		got[k] = name
		near, _ := m.FunctionAt(f[0], f[1])
		if name == p.Expected {
			c.scope[k]++
		}
		if near.Name != "" && near.Name == bareName(p.Expected) || near.Name == "" && p.Expected == Anonymous {
			c.nearest[k]++
		}
		if p.Rewritten == "" {
			assert.Truef(t, named, "%s at %d:%d: no scope", p.Expected, f[0], f[1])
			assert.Equalf(t, p.Expected, name, "frame at %d:%d", f[0], f[1])
		}
	}
	if p.Rewritten != "" {
		c.rewritten++
	}
	t.Logf("%-28s error frame %-28q profile frame %-28q %s", p.Expected, got[0], got[1], p.Rewritten)
}

// bareName is the function's own name in a scope name (ShoppingCart.addItem
// → addItem, get X.total → total): what a single segment can name.
func bareName(name string) string {
	name = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(name, "get "), "set "), "new ")
	return name[strings.LastIndexByte(name, '.')+1:]
}

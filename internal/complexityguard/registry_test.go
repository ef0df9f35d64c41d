package complexityguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moduleRoot is the module's directory, from this package's.
const moduleRoot = "../.."

// externalRow is a row whose code under test is unexported, so it runs as
// a test of its own package with this package's helpers: the registry
// checks that the test exists.
type externalRow struct {
	name string
	// test is "<file in the module>:<TestName>".
	test string
	fuzz []string
}

var externalRows = []externalRow{
	{
		name: "cli_input", test: "cmd/sentryprof/complexity_test.go:TestComplexityGuardReadInput",
		fuzz: []string{"cmd/sentryprof.FuzzDecompress"},
	},
	{
		name: "receiver_encodings", test: "sentryprofilereceiver/complexity_test.go:TestComplexityGuardEncodings",
		fuzz: []string{"sentryprofilereceiver.FuzzRawBodyDecoders"},
	},
	{
		name: "forward_spool_records", test: "sentryprofilereceiver/internal/forward/complexity_test.go:TestComplexityGuardSpoolRecord",
		fuzz: []string{"sentryprofilereceiver/internal/forward.FuzzDecodeSpoolRecord"},
	},
	{
		name: "symbolication_error_records", test: "symbolicationprocessor/complexity_test.go:TestComplexityGuardErrorRecords",
		fuzz: []string{"symbolicationprocessor.FuzzProcessLogs"},
	},
	{
		name: "sentry_timestamps", test: "translator/internal/sentrytime/time_test.go:TestComplexityGuardSeconds",
		fuzz: []string{"translator/internal/sentrytime.FuzzParseSeconds", "translator/sentry.FuzzFastNanos"},
	},
	{name: "sourcemap_hermes_functions", test: "symbolication/sourcemap/hermes_test.go:TestComplexityGuardHermes"},
}

// routerItemTypes reads the item types of ARCHITECTURE.md's "The router's
// table", which sentryprofilereceiver's TestArchitectureDocItemTable keeps
// equal to the router's itemRoutes: a type added to the router is a row
// there, and so a decoder the guard must have a row for.
func routerItemTypes(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(moduleRoot, "ARCHITECTURE.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "## The router's table")
	require.True(t, ok, `ARCHITECTURE.md has no "## The router's table" section`)
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| [a-z]+ \\| `[A-Za-z.]+` \\|$")
	var types []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		types = append(types, m[1])
	}
	require.NotEmpty(t, types, "no item type read from ARCHITECTURE.md's router table")
	return types
}

// fuzzTargets lists every fuzz target of the module as
// "<package path>.<FuzzName>", from the source (`go test -list` would
// build every package).
func fuzzTargets(t *testing.T) []string {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]*)\(`)
	var targets []string
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != moduleRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if path != moduleRoot {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(moduleRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			targets = append(targets, filepath.ToSlash(rel)+"."+string(m[1]))
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, targets)
	return targets
}

// TestEveryDecoderHasARow fails when the router gains an item type, or the
// module a fuzz target, that no row of the guard covers: a new decoder
// cannot arrive without its complexity being measured.
func TestEveryDecoderHasARow(t *testing.T) {
	rows := allRows()
	covered := map[string][]string{} // fuzz target → rows
	rowTypes := map[string]bool{}
	names := map[string]bool{}
	for _, r := range rows {
		assert.Falsef(t, names[r.name], "two rows are named %s", r.name)
		names[r.name] = true
		for _, f := range r.fuzz {
			covered[f] = append(covered[f], r.name)
		}
		if r.itemType != "" {
			rowTypes[r.itemType] = true
		}
	}
	for _, x := range externalRows {
		assert.Falsef(t, names[x.name], "two rows are named %s", x.name)
		names[x.name] = true
		file, test, ok := strings.Cut(x.test, ":")
		require.Truef(t, ok, "external row %s: test %q is not file:TestName", x.name, x.test)
		src, err := os.ReadFile(filepath.Join(moduleRoot, file))
		if assert.NoErrorf(t, err, "external row %s", x.name) {
			assert.Containsf(t, string(src), "func "+test+"(t *testing.T)", "external row %s: %s has no %s", x.name, file, test)
		}
		for _, f := range x.fuzz {
			covered[f] = append(covered[f], x.name)
		}
	}

	itemTypes := routerItemTypes(t)
	for _, typ := range itemTypes {
		assert.Truef(t, rowTypes[typ], "the router translates item type %q (ARCHITECTURE.md's router table) but no complexity guard row sends it: add a row to receiverRows", typ)
	}
	for typ := range rowTypes {
		assert.Containsf(t, itemTypes, typ, "a row sends item type %q, which the router's table does not have", typ)
	}

	targets := fuzzTargets(t)
	for _, f := range targets {
		assert.NotEmptyf(t, covered[f], "fuzz target %s is covered by no complexity guard row: name it in the fuzz list of the row that grows its input", f)
	}
	for f, by := range covered {
		assert.Truef(t, slices.Contains(targets, f), "rows %v name fuzz target %s, which does not exist", by, f)
	}
}

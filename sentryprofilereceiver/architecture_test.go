package sentryprofilereceiver

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

// TestArchitectureDocItemTable keeps ARCHITECTURE.md's item-type table the
// router's: the same rows, in the same order.
func TestArchitectureDocItemTable(t *testing.T) {
	doc := readArchitectureDoc(t)
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([a-z]+) \\| `([A-Za-z.]+)` \\|$")
	var got []string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		got = append(got, m[1]+" "+m[2]+" "+m[3])
	}
	var want []string
	for _, r := range itemRoutes {
		want = append(want, r.itemType+" "+string(r.signal)+" "+r.translator)
	}
	assert.Equal(t, want, got, "ARCHITECTURE.md's table and itemRoutes differ")
}

// TestArchitectureDocNamesEveryPackage: every package of the module (a
// directory with Go files, outside testdata and other modules) is named in
// ARCHITECTURE.md as `path`, and every path the page names as a package
// exists.
func TestArchitectureDocNamesEveryPackage(t *testing.T) {
	doc := readArchitectureDoc(t)
	root := filepath.Join("..")
	var packages []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		goFiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if len(goFiles) > 0 && path != root {
			rel, _ := filepath.Rel(root, path)
			packages = append(packages, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, packages, "sentryprofilereceiver/internal/forward")
	for _, p := range packages {
		assert.Contains(t, doc, "`"+p+"`", "ARCHITECTURE.md does not name package %s", p)
	}
	named := regexp.MustCompile("`((?:internal|translator|sentryprofilereceiver|sentryprofileexporter|cmd)(?:/[a-z0-9]+)*)`")
	for _, m := range named.FindAllStringSubmatch(doc, -1) {
		assert.True(t, slices.Contains(packages, m[1]), "ARCHITECTURE.md names %s, which is not a package", m[1])
	}
}

func readArchitectureDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "ARCHITECTURE.md"))
	require.NoError(t, err)
	return string(b)
}

// TestReadmesSayWhatIsDecoded keeps the READMEs' word on the Android
// formats true: TestFixtureAndroidTraces and TestPerfettoChunkItem show
// both are decoded, so each README names the package that decodes them and
// neither says they are dropped or undecoded.
func TestReadmesSayWhatIsDecoded(t *testing.T) {
	for path, packages := range map[string][]string{
		"README.md":    {"](../translator/art)", "](../translator/perfetto)"},
		"../README.md": {"](translator/art)", "](translator/perfetto)"},
	} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		text := strings.Join(strings.Fields(string(data)), " ") // one line, whatever the wrapping
		for _, link := range packages {
			assert.Contains(t, text, link, "%s links the decoder", path)
		}
		for _, stale := range []string{"no decoder for", "not decoded yet", "Perfetto chunks are dropped", "ART method traces are dropped"} {
			assert.NotContains(t, text, stale, "%s says a decoded format is not", path)
		}
	}
}

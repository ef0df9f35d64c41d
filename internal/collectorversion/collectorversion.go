// Package collectorversion reads which OpenTelemetry Collector release this
// repository builds against, from every file that names it: the go.mod of
// each module, the ocb manifest and the Makefile's OCB_VERSION. The
// collector publishes each release as two version lines at once (unstable
// modules v0.N.x, stable ones v1.M.x, contrib v0.N.x); a file naming another
// release than the rest is a half-done upgrade, which the package's test
// refuses and the bump command avoids.
package collectorversion // import "github.com/sentryprofile/otelcol-sentryprofile/internal/collectorversion"

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Module prefixes of the collector's releases.
const (
	corePrefix    = "go.opentelemetry.io/collector"
	contribPrefix = "github.com/open-telemetry/opentelemetry-collector-contrib"
)

// Files that name collector modules, relative to the repository root.
var (
	GoModFiles  = []string{"go.mod", "compat/pyroscope/v04/go.mod", "deploy/go.mod"}
	BuilderFile = "builder-config.yaml"
	Makefile    = "Makefile"
)

// Reference is one place that names a collector module at a version.
type Reference struct {
	File    string
	Module  string
	Version string
}

// IsCollectorModule reports whether path is a module of a collector
// release (core or contrib). mdatagen, a go tool of this module, is left
// out: it is versioned on its own and pinned for the code it generates.
func IsCollectorModule(path string) bool {
	if path == corePrefix+"/cmd/mdatagen" {
		return false
	}
	return path == corePrefix || strings.HasPrefix(path, corePrefix+"/") ||
		strings.HasPrefix(path, contribPrefix+"/")
}

// Read returns every reference to a collector module in the repository at
// root: go.mod's direct requirements, the ocb manifest's
// `gomod:` lines and the Makefile's OCB_VERSION (as the builder module).
func Read(root string) ([]Reference, error) {
	var refs []Reference
	for _, name := range GoModFiles {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f, err := modfile.ParseLax(name, data, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, r := range f.Require {
			// Indirect requirements are whatever minimal version selection
			// picked for a dependency (mdatagen pulls older ones); only
			// the direct ones are this repository's choice.
			if !r.Indirect && IsCollectorModule(r.Mod.Path) {
				refs = append(refs, Reference{File: name, Module: r.Mod.Path, Version: r.Mod.Version})
			}
		}
	}
	manifest, err := readManifest(filepath.Join(root, BuilderFile))
	if err != nil {
		return nil, err
	}
	refs = append(refs, manifest...)
	ocb, err := readOCBVersion(filepath.Join(root, Makefile))
	if err != nil {
		return nil, err
	}
	return append(refs, Reference{File: Makefile, Module: corePrefix + "/cmd/builder", Version: ocb}), nil
}

var gomodLine = regexp.MustCompile(`^\s*-\s*gomod:\s*(\S+)\s+(\S+)`)

func readManifest(path string) ([]Reference, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var refs []Reference
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		m := gomodLine.FindStringSubmatch(sc.Text())
		if m != nil && IsCollectorModule(m[1]) {
			refs = append(refs, Reference{File: BuilderFile, Module: m[1], Version: m[2]})
		}
	}
	return refs, sc.Err()
}

var ocbLine = regexp.MustCompile(`(?m)^OCB_VERSION\s*:?=\s*(\S+)`)

func readOCBVersion(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m := ocbLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no OCB_VERSION", path)
	}
	return string(m[1]), nil
}

// Release is one collector release: its unstable (v0) and stable (v1)
// minor versions, e.g. 165 and 71 for v0.165.0 / v1.71.0.
type Release struct {
	Unstable, Stable int
}

func (r Release) String() string {
	return fmt.Sprintf("v0.%d / v1.%d", r.Unstable, r.Stable)
}

// minor returns the minor number of a semantic version and its major.
func minor(v string) (major string, n int, ok bool) {
	if !semver.IsValid(v) {
		return "", 0, false
	}
	mm := strings.TrimPrefix(semver.MajorMinor(v), semver.Major(v)+".")
	if _, err := fmt.Sscanf(mm, "%d", &n); err != nil {
		return "", 0, false
	}
	return semver.Major(v), n, true
}

// Check returns one line per reference that does not belong to the release
// of the majority of core v0 references (contrib is held to the same v0
// minor, any patch; core v1 modules to the release's stable minor, which is
// taken from the majority of v1 references).
func Check(refs []Reference) (Release, []string) {
	unstable, stable := map[int]int{}, map[int]int{}
	for _, r := range refs {
		if major, n, ok := minor(r.Version); ok && strings.HasPrefix(r.Module, corePrefix) {
			switch major {
			case "v0":
				unstable[n]++
			case "v1":
				stable[n]++
			}
		}
	}
	rel := Release{Unstable: majority(unstable), Stable: majority(stable)}
	var problems []string
	for _, r := range refs {
		major, n, ok := minor(r.Version)
		want := map[string]int{"v0": rel.Unstable, "v1": rel.Stable}[major]
		if !ok || (major != "v0" && major != "v1") || n != want || (major == "v1" && strings.HasPrefix(r.Module, contribPrefix)) {
			problems = append(problems, fmt.Sprintf("%s: %s %s is not of collector release %s", r.File, r.Module, r.Version, rel))
		}
	}
	return rel, problems
}

func majority(counts map[int]int) int {
	best, bestN := 0, -1
	for v, n := range counts {
		if n > bestN || (n == bestN && v > best) {
			best, bestN = v, n
		}
	}
	return best
}

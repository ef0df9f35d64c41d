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
	return isCoreModule(path) || strings.HasPrefix(path, contribPrefix+"/")
}

func isCoreModule(path string) bool {
	return path == corePrefix || strings.HasPrefix(path, corePrefix+"/")
}

// Read returns every reference to a collector module in the repository at
// root: go.mod's direct requirements, the ocb manifest's
// `gomod:` lines and the Makefile's OCB_VERSION (as the builder module).
func Read(root string) ([]Reference, error) {
	var refs []Reference
	for _, name := range GoModFiles {
		modRefs, err := readGoMod(root, name)
		if err != nil {
			return nil, err
		}
		refs = append(refs, modRefs...)
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

// readGoMod returns the collector modules a go.mod requires directly;
// none when the file does not exist. Indirect requirements are whatever
// minimal version selection picked for a dependency (mdatagen pulls older
// ones); only the direct ones are this repository's choice.
func readGoMod(root, name string) ([]Reference, error) {
	data, err := os.ReadFile(filepath.Join(root, name))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return directCollectorRefs(name, f.Require), nil
}

func directCollectorRefs(name string, requires []*modfile.Require) []Reference {
	var refs []Reference
	for _, r := range requires {
		if !r.Indirect && IsCollectorModule(r.Mod.Path) {
			refs = append(refs, Reference{File: name, Module: r.Mod.Path, Version: r.Mod.Version})
		}
	}
	return refs
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
		if r, ok := manifestReference(sc.Text()); ok {
			refs = append(refs, r)
		}
	}
	return refs, sc.Err()
}

// manifestReference reads a `- gomod: <module> <version>` line of a
// collector module.
func manifestReference(line string) (Reference, bool) {
	m := gomodLine.FindStringSubmatch(line)
	if m == nil || !IsCollectorModule(m[1]) {
		return Reference{}, false
	}
	return Reference{File: BuilderFile, Module: m[1], Version: m[2]}, true
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
	rel := releaseOf(refs)
	var problems []string
	for _, r := range refs {
		if !rel.holds(r) {
			problems = append(problems, fmt.Sprintf("%s: %s %s is not of collector release %s", r.File, r.Module, r.Version, rel))
		}
	}
	return rel, problems
}

// releaseOf is the release of the majority of core references: their v0
// minor, and their v1 minor.
func releaseOf(refs []Reference) Release {
	minors := map[string]map[int]int{"v0": {}, "v1": {}} // major → minor → references
	for _, r := range refs {
		major, n, ok := minor(r.Version)
		if counts := minors[major]; ok && counts != nil && strings.HasPrefix(r.Module, corePrefix) {
			counts[n]++
		}
	}
	return Release{Unstable: majority(minors["v0"]), Stable: majority(minors["v1"])}
}

// holds reports whether a reference belongs to the release: a v0 module
// of its unstable minor, or a core v1 module of its stable minor.
func (r Release) holds(ref Reference) bool {
	major, n, ok := minor(ref.Version)
	switch {
	case !ok:
		return false
	case major == "v0":
		return n == r.Unstable
	case major == "v1":
		return n == r.Stable && !strings.HasPrefix(ref.Module, contribPrefix)
	}
	return false
}

// majority is the value counted most, the highest of a tie.
func majority(counts map[int]int) int {
	best, bestN := 0, -1
	for v, n := range counts {
		if outranks(v, n, best, bestN) {
			best, bestN = v, n
		}
	}
	return best
}

func outranks(v, n, best, bestN int) bool { return n > bestN || (n == bestN && v > best) }

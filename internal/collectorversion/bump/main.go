// Command bump moves every collector and contrib module this repository
// names (go.mod files, the ocb manifest, the Makefile's OCB_VERSION) to one
// collector release, then tidies each module. `make bump-collector
// COLLECTOR_VERSION=v0.N.0` runs it from the repository root.
//
// A module keeps its version line (v0 or v1) unless the release publishes it
// only on the other one, as confighttp moved to v1 in v0.165.0: the module
// proxy is asked which versions exist.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/collectorversion"
)

func main() {
	target := flag.String("version", "", "the collector release to move to, as its v0 version (e.g. v0.166.0)")
	flag.Parse()
	var unstable int
	if _, err := fmt.Sscanf(*target, "v0.%d.0", &unstable); err != nil {
		log.Fatalf("bump: -version must look like v0.166.0, got %q", *target)
	}
	if err := run(".", unstable); err != nil {
		log.Fatalf("bump: %v", err)
	}
}

func run(root string, unstable int) error {
	refs, next, err := plan(root, unstable)
	if err != nil {
		return err
	}

	chosen, err := chooseVersions(refs, next)
	if err != nil {
		return err
	}
	for _, name := range collectorversion.GoModFiles {
		if err := bumpGoMod(root, name, refs, chosen); err != nil {
			return err
		}
	}
	if err := rewriteManifest(root, chosen); err != nil {
		return err
	}
	return rewrite(filepath.Join(root, collectorversion.Makefile), regexp.MustCompile(`(?m)^(OCB_VERSION\s*:?=\s*)(\S+)`), func(m []string) string {
		return m[1] + chosen["go.opentelemetry.io/collector/cmd/builder"]
	})
}

// plan reads the references and the release they move to: the v0 minor
// asked for, the v1 minor as far from it as today.
func plan(root string, unstable int) ([]collectorversion.Reference, collectorversion.Release, error) {
	refs, err := collectorversion.Read(root)
	if err != nil {
		return nil, collectorversion.Release{}, err
	}
	current, problems := collectorversion.Check(refs)
	if len(problems) > 0 {
		log.Printf("bump: the files disagree before the bump (the bump fixes this):\n  %s", strings.Join(problems, "\n  "))
	}
	next := collectorversion.Release{Unstable: unstable, Stable: unstable - (current.Unstable - current.Stable)}
	log.Printf("bump: %s -> %s", current, next)
	return refs, next, nil
}

// chooseVersions picks each module's version in the next release, once
// per module.
func chooseVersions(refs []collectorversion.Reference, next collectorversion.Release) (map[string]string, error) {
	chosen := map[string]string{}
	for _, r := range refs {
		if _, ok := chosen[r.Module]; ok {
			continue
		}
		v, err := versionIn(r, next)
		if err != nil {
			return nil, err
		}
		chosen[r.Module] = v
	}
	return chosen, nil
}

// rewriteManifest sets the chosen versions on the ocb manifest's gomod
// lines.
func rewriteManifest(root string, chosen map[string]string) error {
	return rewrite(filepath.Join(root, collectorversion.BuilderFile), regexp.MustCompile(`(gomod:\s*)(\S+)(\s+)(\S+)`), func(m []string) string {
		if v, ok := chosen[m[2]]; ok {
			return m[1] + m[2] + m[3] + v
		}
		return m[0]
	})
}

// versionIn returns the version of r's module in the release: on the
// line it is on today when the proxy has it there, else on the other.
func versionIn(r collectorversion.Reference, next collectorversion.Release) (string, error) {
	v0, v1 := fmt.Sprintf("v0.%d.0", next.Unstable), fmt.Sprintf("v1.%d.0", next.Stable)
	want, other := v0, v1
	if strings.HasPrefix(r.Version, "v1.") {
		want, other = v1, v0
	}
	published, err := publishedVersions(r.Module)
	if err != nil {
		return "", err
	}
	switch {
	case slices.Contains(published, want):
		return want, nil
	case slices.Contains(published, other):
		log.Printf("bump: %s is published as %s in this release (was %s)", r.Module, other, r.Version)
		return other, nil
	}
	return "", fmt.Errorf("%s: neither %s nor %s is published", r.Module, want, other)
}

// publishedVersions lists a module's versions on the proxy.
func publishedVersions(module string) ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-versions", module).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m -versions %s: %w", module, err)
	}
	return strings.Fields(string(out)), nil
}

func bumpGoMod(root, name string, refs []collectorversion.Reference, chosen map[string]string) error {
	dir := filepath.Dir(filepath.Join(root, name))
	var args []string
	for _, r := range refs {
		if r.File == name {
			args = append(args, "-require="+r.Module+"@"+chosen[r.Module])
		}
	}
	if len(args) == 0 {
		return nil
	}
	if err := goCmd(dir, append([]string{"mod", "edit"}, args...)...); err != nil {
		return err
	}
	return goCmd(dir, "mod", "tidy")
}

func goCmd(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("in %s: go %s: %w", dir, strings.Join(args, " "), err)
	}
	return nil
}

func rewrite(path string, re *regexp.Regexp, replace func([]string) string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := re.ReplaceAllStringFunc(string(data), func(s string) string {
		return replace(re.FindStringSubmatch(s))
	})
	return os.WriteFile(path, []byte(out), 0o644)
}

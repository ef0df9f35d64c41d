// Package testenv decides what a test does when something it reads or runs
// is not on the machine: a shared fixture beside the checkout, or a tool
// such as gcc, proguard or debuginfod. By default it skips with the reason,
// so that `go test ./...` works on a bare checkout; with REQUIRE_FIXTURES=1
// or REQUIRE_TOOLS=1 (as `.ci/run` sets both) it fails instead, so that a
// green CI run means every such test ran.
package testenv // import "github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// The switches, each "1" to turn a skip into a failure.
const (
	RequireFixturesEnv = "REQUIRE_FIXTURES"
	RequireToolsEnv    = "REQUIRE_TOOLS"
)

// MissingFixture skips tb, or fails it under REQUIRE_FIXTURES=1.
func MissingFixture(tb testing.TB, format string, args ...any) {
	tb.Helper()
	missing(tb, RequireFixturesEnv, format, args...)
}

// MissingTool skips tb, or fails it under REQUIRE_TOOLS=1.
func MissingTool(tb testing.TB, format string, args ...any) {
	tb.Helper()
	missing(tb, RequireToolsEnv, format, args...)
}

// LookPath returns the path of tool, or skips tb (fails it under
// REQUIRE_TOOLS=1) naming the Debian package that installs it.
func LookPath(tb testing.TB, tool, debianPackage string) string {
	tb.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		MissingTool(tb, "%s not installed (Debian: %s): %v", tool, debianPackage, err)
	}
	return path
}

func missing(tb testing.TB, env, format string, args ...any) {
	tb.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv(env) == "1" {
		tb.Fatalf("%s (%s=1: a missing requirement fails the test)", reason, env)
		return
	}
	tb.Skip(reason)
}

// Package hermestest builds a React Native shaped app as a release build
// does (minified, compiled to Hermes bytecode, the maps composed, a debug
// id injected), runs it in a real Hermes runtime, and reads the frames of
// its error and of its sampling profile as React Native's Sentry SDK sends
// them, for the tests of the source map resolver and of the symbolication
// processor. What Sentry shows for those frames is computed in node, by
// Mozilla's source-map and metro-symbolicate, not by the code under test.
//
// The npm project is symbolication/sourcemap/testdata/hermes (its
// package-lock.json pins hermes-engine-cli, whose hermes runtime and hermesc
// compiler share one bytecode version). Without node and npm, or on a host
// the runtime is not built for, the tests skip (fail under REQUIRE_TOOLS=1).
package hermestest // import "github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap/hermestest"

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// BundleURL is where React Native's SDK says an Android app's bundle is
// (its RewriteFrames integration and the profiler's frames).
const BundleURL = "app:///index.android.bundle"

// App is one build of the test app.
type App struct {
	// DebugID is the debug id of the bundle and of its composed map.
	DebugID string `json:"debugId"`
	// Bytecode is the Hermes bytecode file, index.android.bundle.
	Bytecode string `json:"bytecode"`
	// Map is the composed source map, sourcemaps/index.android.bundle.map.
	Map string `json:"map"`
	// Hermes is the runtime that runs Bytecode.
	Hermes string `json:"hermes"`
	// MapsDir is the directory of Map, as a resolver is configured with.
	MapsDir string `json:"-"`
	node    string
}

// Frame is a frame as React Native's SDK sends it for Hermes bytecode:
// line 1, column the bytecode offset + 1 (`colno`), the function as Hermes
// names it ("" for an anonymous one in a profile, "anonymous" in an error).
type Frame struct {
	Function string `json:"function"`
	Lineno   int    `json:"lineno"`
	Colno    int    `json:"colno"`
}

// Run is what one run of the app gave.
type Run struct {
	// ErrorType and ErrorValue are the first line of the error's stack.
	ErrorType, ErrorValue string
	// Error is the error's frames, innermost first, native ones left out.
	Error []Frame
	// Profile is every bytecode frame of the sampling profile.
	Profile []Frame
	// Stack is the error's stack as Hermes printed it.
	Stack string
}

// Expected is what Sentry shows for a frame: the original function, file
// and 1-based line and column; nil for a frame the map has nothing for.
type Expected struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

// Build builds the app into a temporary directory.
func Build(tb testing.TB) App {
	tb.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		testenv.MissingTool(tb, "hermes-engine-cli ships a Hermes runtime for linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	node := testenv.LookPath(tb, "node", "nodejs")
	installModules(tb, testenv.LookPath(tb, "npm", "npm"))
	out := tb.TempDir()
	runNode(tb, node, nil, "build.mjs", out)
	b, err := os.ReadFile(filepath.Join(out, "build.json"))
	if err != nil {
		tb.Fatalf("read build.json: %v", err)
	}
	var app App
	if err := json.Unmarshal(b, &app); err != nil {
		tb.Fatalf("decode build.json: %v", err)
	}
	app.MapsDir, app.node = filepath.Dir(app.Map), node
	return app
}

// Run runs the app in the Hermes runtime with its sampling profiler on:
// it prints the error it catches (e.stack, what React Native's error
// handler gives the SDK), and the profiler writes its trace to stderr.
func (a App) Run(tb testing.TB) Run {
	tb.Helper()
	cmd := exec.Command(a.Hermes, "-b", "-sample-profiling", filepath.Base(a.Bytecode))
	// Run beside the bundle, so that frames name it as a device does.
	cmd.Dir = filepath.Dir(a.Bytecode)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("hermes %s: %v\n%s\n%s", a.Bytecode, err, stdout.Bytes(), stderr.Bytes())
	}
	r := readStack(tb, stdout.String())
	r.Profile = readProfile(tb, stderr.Bytes())
	return r
}

// ErrorEvent is the error event React Native's SDK sends for the run's
// error: platform javascript, the exception with its frames outermost
// first (Sentry's order), each with the bundle's URL as `filename` (the
// SDK's RewriteFrames) and `abs_path`, line 1 and the column the SDK
// computes; the bundle's debug id as a `sourcemap` debug image.
func (a App) ErrorEvent(tb testing.TB, r Run) []byte {
	tb.Helper()
	type frame struct {
		Function string `json:"function"`
		Filename string `json:"filename"`
		AbsPath  string `json:"abs_path"`
		Lineno   int    `json:"lineno"`
		Colno    int    `json:"colno"`
		InApp    bool   `json:"in_app"`
	}
	frames := make([]frame, len(r.Error))
	for i, f := range r.Error {
		frames[len(frames)-1-i] = frame{Function: f.Function, Filename: BundleURL, AbsPath: BundleURL, Lineno: f.Lineno, Colno: f.Colno, InApp: true}
	}
	ev := map[string]any{
		"event_id":  "9f2c4e1a7b3d4c5e8f6a0b1c2d3e4f5a",
		"timestamp": 1764000000.5,
		"platform":  "javascript",
		"level":     "fatal",
		"release":   "com.shop@1.0+1",
		"dist":      "1",
		"sdk":       map[string]any{"name": "sentry.javascript.react-native", "version": "6.10.0"},
		"exception": map[string]any{"values": []any{map[string]any{
			"type": r.ErrorType, "value": r.ErrorValue,
			"mechanism":  map[string]any{"type": "onerror", "handled": false},
			"stacktrace": map[string]any{"frames": frames},
		}}},
		"debug_meta": map[string]any{"images": []any{map[string]any{"type": "sourcemap", "code_file": BundleURL, "debug_id": a.DebugID}}},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		tb.Fatalf("encode the event: %v", err)
	}
	return b
}

// SourcePosition is a frame of the app run from its minified JavaScript
// (not bytecode): Hermes then prints the 1-based line and column.
type SourcePosition struct {
	Function     string
	Line, Column int
}

// CompilerMap is the map hermesc wrote for the bytecode: bytecode offsets
// to positions in the minified bundle (JSBundle), before it was composed.
func (a App) CompilerMap() string { return a.Bytecode + ".map" }

// JSBundle is the minified bundle hermesc compiled.
func (a App) JSBundle() string { return a.Bytecode + ".js" }

// RunSource runs the minified bundle in the Hermes runtime from source,
// compiled with -O as the bytecode was, and returns the frames of the
// error it prints: the positions in the bundle the bytecode's offsets
// stand for.
func (a App) RunSource(tb testing.TB) []SourcePosition {
	tb.Helper()
	cmd := exec.Command(a.Hermes, "-O", filepath.Base(a.JSBundle()))
	cmd.Dir = filepath.Dir(a.Bytecode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("hermes %s: %v\n%s", a.JSBundle(), err, out)
	}
	var frames []SourcePosition
	for _, l := range strings.Split(string(out), "\n") {
		m := sourceFrame.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		frames = append(frames, SourcePosition{Function: m[1], Line: line, Column: col})
	}
	return frames
}

// sourceFrame is a frame line of Hermes's Error.stack for code with debug
// info: `    at name (file:line:column)`.
var sourceFrame = regexp.MustCompile(`^\s+at (\S*) \([^:()]+:(\d+):(\d+)\)$`)

// Expect computes in node what Sentry shows for frames (testdata/hermes/expect.mjs).
func (a App) Expect(tb testing.TB, frames []Frame) []*Expected {
	tb.Helper()
	in, err := json.Marshal(map[string]any{"map": a.Map, "frames": frames})
	if err != nil {
		tb.Fatalf("encode frames: %v", err)
	}
	var out []*Expected
	if err := json.Unmarshal(runNode(tb, a.node, in, "expect.mjs"), &out); err != nil {
		tb.Fatalf("decode expect.mjs output: %v", err)
	}
	if len(out) != len(frames) {
		tb.Fatalf("expect.mjs answered %d frames for %d", len(out), len(frames))
	}
	return out
}

// hermesFrame is a frame line of Hermes's Error.stack for bytecode without
// debug info: `    at name (address at file:line:offset)`, the offset
// 0-based; `    at name (native)` for a native function.
var hermesFrame = regexp.MustCompile(`^\s+at (\S*) \(address at ([^:]+):(\d+):(\d+)\)$`)

// readStack reads the printed error: its first line and each bytecode
// frame, as the SDK makes them (its stack parser drops "address at ", its
// RewriteFrames integration adds 1 to a Hermes column: Hermes prints
// bytecode offsets 0-based, Sentry's columns are 1-based).
func readStack(tb testing.TB, printed string) Run {
	tb.Helper()
	var r Run
	start := strings.Index(printed, "RangeError: ")
	if start < 0 {
		tb.Fatalf("no error in the app's output:\n%s", printed)
	}
	r.Stack = strings.TrimSpace(printed[start:])
	lines := strings.Split(r.Stack, "\n")
	r.ErrorType, r.ErrorValue, _ = strings.Cut(lines[0], ": ")
	for _, l := range lines[1:] {
		m := hermesFrame.FindStringSubmatch(l)
		if m == nil {
			continue // (native)
		}
		line, _ := strconv.Atoi(m[3])
		offset, _ := strconv.Atoi(m[4])
		r.Error = append(r.Error, Frame{Function: m[1], Lineno: line, Colno: offset + 1})
	}
	return r
}

// profileFrame is a frame of Hermes's sampling profile (Chrome trace
// format); a bytecode frame has funcVirtAddr and offset.
type profileFrame struct {
	Name         string `json:"name"`
	Category     string `json:"category"`
	FuncVirtAddr string `json:"funcVirtAddr"`
	Offset       string `json:"offset"`
}

// readProfile reads the bytecode frames of the profile as the SDK's
// profiler integration converts them: line 1, column funcVirtAddr +
// offset + 1.
func readProfile(tb testing.TB, trace []byte) []Frame {
	tb.Helper()
	var p struct {
		StackFrames map[string]profileFrame `json:"stackFrames"`
	}
	if err := json.Unmarshal(trace, &p); err != nil {
		tb.Fatalf("decode the sampling profile: %v\n%s", err, trace)
	}
	var frames []Frame
	for _, f := range p.StackFrames {
		if f.Category != "JavaScript" || f.FuncVirtAddr == "" {
			continue
		}
		addr, err1 := strconv.Atoi(f.FuncVirtAddr)
		offset, err2 := strconv.Atoi(f.Offset)
		if err1 != nil || err2 != nil {
			tb.Fatalf("profile frame %+v: bad address", f)
		}
		frames = append(frames, Frame{Function: f.Name, Lineno: 1, Colno: addr + offset + 1})
	}
	return frames
}

// projectDir is the npm project, found from this file's place.
func projectDir(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("hermestest: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "hermes")
}

// runNode runs a script of the project with stdin in, and returns its
// output.
func runNode(tb testing.TB, node string, in []byte, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = projectDir(tb)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// installModules runs npm ci when node_modules is missing or older than
// the lockfile (npm writes node_modules/.package-lock.json last). The
// tests of several packages build the app, and `go test ./...` runs them
// at once: the check and the install hold a file lock, so that one
// installs while the others wait, instead of one deleting node_modules
// under another.
func installModules(tb testing.TB, npm string) {
	tb.Helper()
	dir := projectDir(tb)
	unlock, err := lockFile(filepath.Join(dir, ".npm-ci.lock"))
	if err != nil {
		tb.Fatalf("lock the npm install: %v", err)
	}
	defer unlock()
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		tb.Fatalf("the npm project's lockfile: %v", err)
	}
	if done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !done.ModTime().Before(lock.ModTime()) {
		return
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		testenv.MissingTool(tb, "npm ci in %s: %v\n%s", dir, err, b)
	}
}

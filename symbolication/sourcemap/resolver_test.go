package sourcemap

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// testdata/dist is testdata/src/app.js bundled and minified by esbuild
// with Sentry's esbuild plugin injecting a debug id
// (e2e/symbolication/build-testdata.mjs).
const (
	bundlePath = "testdata/dist/app.min.js"
	sourcePath = "testdata/src/app.js"
)

// v8Position is where V8 and the JS Self-Profiling API place a function of
// the bundle: the 1-based column of the start of its parameters, found by
// a snippet that begins there.
func v8Position(t *testing.T, bundle, snippet string) (line, column int) {
	t.Helper()
	for i, l := range strings.Split(bundle, "\n") {
		if c := strings.Index(l, snippet); c >= 0 {
			require.Equal(t, c, strings.LastIndex(l, snippet), "snippet %q is not unique", snippet)
			return i + 1, c + 1
		}
	}
	t.Fatalf("snippet %q not in the bundle", snippet)
	return 0, 0
}

// sourcePosition is the 1-based line and column of the first occurrence of
// ident after the marker in the original source.
func sourcePosition(t *testing.T, source, marker, ident string) (line, column int) {
	t.Helper()
	for i, l := range strings.Split(source, "\n") {
		if c := strings.Index(l, marker); c >= 0 {
			return i + 1, c + strings.Index(l[c:], ident) + 1
		}
	}
	t.Fatalf("marker %q not in the source", marker)
	return 0, 0
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func bundleDebugIDOf(t *testing.T, bundle string) string {
	t.Helper()
	m := regexp.MustCompile(`sentry-dbid-([0-9a-f-]{36})`).FindStringSubmatch(bundle)
	require.NotNil(t, m, "the plugin injected no debug id")
	return m[1]
}

func TestResolveRealEsbuildBundle(t *testing.T) {
	bundle, source := readString(t, bundlePath), readString(t, sourcePath)
	r, err := NewResolver(Options{Dirs: []string{"testdata"}, MaxCacheBytes: 1 << 20})
	require.NoError(t, err)
	tests := []struct {
		name     string
		snippet  string // the bundle text at the function's V8 position
		lineOf   func(line int) int
		minified string
		function string
		marker   string // where the function is declared in the source
		ident    string // the token the answer points at
	}{
		{name: "function declaration", snippet: "(t){let e=0;for(let r=2", function: "computePrimes", marker: "function computePrimes", ident: "computePrimes"},
		{name: "inner function", snippet: "(t){for(let e=2;e*e", function: "isPrime", marker: "function isPrime", ident: "isPrime"},
		{name: "arrow function at its parameter", snippet: "t=>{let e=0;for(let r=0", function: "hashText", marker: "const hashText", ident: "hashText"},
		{name: "kept method name", snippet: "(e){return e*2}", minified: "multiplyBy", function: "multiplyBy", marker: "multiplyBy(other)", ident: "multiplyBy"},
		// @sentry/profiling-node's caller-line mode: the line is the call
		// site's, here in another file, and only the column is the
		// function's.
		{name: "caller line from another file", snippet: "(t){for(let e=2;e*e", lineOf: func(int) int { return 37 }, function: "isPrime", marker: "function isPrime", ident: "isPrime"},
		// Nothing names it: the position is taken on the bundle's only
		// line.
		{name: "caller line, kept method name", snippet: "(e){return e*2}", lineOf: func(int) int { return 37 }, minified: "multiplyBy", function: "multiplyBy", marker: "multiplyBy(other)", ident: "multiplyBy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, col := v8Position(t, bundle, tt.snippet)
			if tt.lineOf != nil {
				line = tt.lineOf(line)
			}
			wantLine, wantCol := sourcePosition(t, source, tt.marker, tt.ident)
			got, err := r.Resolve(context.Background(), symbolication.Lookup{Frame: symbolication.Frame{
				Function: tt.minified, File: "https://cdn.example.com/dist/app.min.js", Line: line, Column: col,
			}})
			require.NoError(t, err)
			assert.Equal(t, []symbolication.Frame{{Function: tt.function, File: "src/app.js", Line: wantLine, Column: wantCol}}, got)
		})
	}
}

func TestResolveFindsTheMap(t *testing.T) {
	bundle := readString(t, bundlePath)
	mapJSON := readString(t, bundlePath+".map")
	id := bundleDebugIDOf(t, bundle)
	line, col := v8Position(t, bundle, "(t){for(let e=2;e*e")

	// Layouts of a directory that should all serve the frame.
	withComment := func(comment string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			b := strings.Replace(bundle, "//# sourceMappingURL=app.min.js.map", comment, 1)
			writeFile(t, filepath.Join(dir, "static/js/main.js"), b)
			writeFile(t, filepath.Join(dir, "static/maps/main.js.map"), mapJSON)
		}
	}
	tests := []struct {
		name    string
		layout  func(t *testing.T, dir string)
		file    string
		debugID string
		wantErr error
	}{
		{name: "map beside the URL path", file: "https://example.com/static/js/main.js", layout: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "static/js/main.js.map"), mapJSON)
		}},
		{name: "sourceMappingURL of the bundle copy", file: "https://example.com/static/js/main.js", layout: withComment("//# sourceMappingURL=../maps/main.js.map")},
		{name: "inline data URL", file: "/srv/app/static/js/main.js", layout: withComment("//# sourceMappingURL=data:application/json;base64," + base64.StdEncoding.EncodeToString([]byte(mapJSON)))},
		{name: "debug id wins over the path", file: "https://elsewhere.example/x.js", debugID: strings.ToUpper(id), layout: withComment("//# sourceMappingURL=../maps/main.js.map")},
		{name: "sourceMappingURL out of the directory is not followed", file: "https://example.com/static/js/main.js", layout: func(t *testing.T, dir string) {
			withComment("//# sourceMappingURL=../../../outside.js.map")(t, dir)
			writeFile(t, filepath.Join(dir, "..", "outside.js.map"), mapJSON)
		}, wantErr: symbolication.ErrNoArtifact},
		{name: "absolute sourceMappingURL is not followed", file: "https://example.com/static/js/main.js", layout: withComment("//# sourceMappingURL=https://example.com/main.js.map"), wantErr: symbolication.ErrNoArtifact},
		{name: "unknown file", file: "https://example.com/other.js", layout: func(*testing.T, string) {}, wantErr: symbolication.ErrNoArtifact},
		{name: "node internal", file: "node:internal/timers", layout: func(*testing.T, string) {}, wantErr: symbolication.ErrNoArtifact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.layout(t, dir)
			r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20})
			require.NoError(t, err)
			got, err := r.Resolve(context.Background(), symbolication.Lookup{DebugID: tt.debugID, Frame: symbolication.Frame{File: tt.file, Line: line, Column: col}})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, "isPrime", got[0].Function)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.js.map"), `{"version":3,"sources":["a.js"],"mappings":"!!"}`)
	writeFile(t, filepath.Join(dir, "good.js.map"), `{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA;AACA"}`)
	r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20})
	require.NoError(t, err)
	tests := []struct {
		name        string
		frame       symbolication.Frame
		wantErr     error
		wantContain string
	}{
		{name: "broken map", frame: symbolication.Frame{File: "/bad.js", Line: 1, Column: 1}, wantContain: "not base64"},
		{name: "no position", frame: symbolication.Frame{File: "/good.js"}, wantErr: symbolication.ErrNoMatch},
		{name: "line without segments, two lines with", frame: symbolication.Frame{File: "/good.js", Line: 5, Column: 1}, wantErr: symbolication.ErrNoMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(context.Background(), symbolication.Lookup{Frame: tt.frame})
			require.Error(t, err)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.NotErrorIs(t, err, symbolication.ErrNoArtifact)
			assert.ErrorContains(t, err, tt.wantContain)
		})
	}
	_, err = NewResolver(Options{Dirs: []string{filepath.Join(dir, "missing")}})
	assert.ErrorContains(t, err, "is not a directory")
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// TestResolveFindsAMapDeployedLater: a frame asked for before its map was
// there resolves once the rescan interval has passed.
func TestResolveFindsAMapDeployedLater(t *testing.T) {
	bundle := readString(t, bundlePath)
	line, col := v8Position(t, bundle, "(t){for(let e=2;e*e")
	dir := t.TempDir()
	r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20, RescanInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	in := symbolication.Lookup{Frame: symbolication.Frame{File: "https://example.com/app.min.js", Line: line, Column: col}}
	_, err = r.Resolve(context.Background(), in)
	require.ErrorIs(t, err, symbolication.ErrNoArtifact)

	writeFile(t, filepath.Join(dir, "app.min.js.map"), readString(t, bundlePath+".map"))
	_, err = r.Resolve(context.Background(), in)
	require.ErrorIs(t, err, symbolication.ErrNoArtifact, "within the interval the miss is remembered")
	time.Sleep(60 * time.Millisecond)
	got, err := r.Resolve(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, "isPrime", got[0].Function)
}

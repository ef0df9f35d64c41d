package sourcemap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/jsscope"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// testScopes adapts jsscope to Scopes, as the processor does.
type testScopes struct{ x *jsscope.Index }

func parseTestScopes(b []byte) (Scopes, error) {
	x, err := jsscope.Parse(b)
	if err != nil {
		return nil, err
	}
	return testScopes{x}, nil
}

func (s testScopes) FunctionName(line, column int, m *Map) (string, bool) {
	return jsscope.FunctionName(s.x, line, column, func(l, c int) (jsscope.Mapping, bool) {
		t, ok := m.At(l, c)
		return jsscope.Mapping{GenLine: t.GenLine, GenColumn: t.GenColumn, Source: t.Source,
			Line: t.Line, Column: t.Column, HasSource: t.HasSource, Name: t.Name}, ok
	})
}

func (s testScopes) Size() int64 { return s.x.Size() }

// TestResolveProfileFramesByScope: a profile frame (its function's start)
// is named by its scope: a method whose key the minifier kept is named
// with its class, as Sentry names it (the map alone gives the key).
func TestResolveProfileFramesByScope(t *testing.T) {
	bundle, source := readString(t, bundlePath), readString(t, sourcePath)
	tests := []struct {
		name   string
		scopes func([]byte) (Scopes, error)
		want   string
	}{
		{"with the bundle's scopes", parseTestScopes, "Matrix.multiplyBy"},
		{"by the map alone", nil, "multiplyBy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewResolver(Options{Dirs: []string{"testdata"}, MaxCacheBytes: 1 << 20, ParseScopes: tt.scopes})
			require.NoError(t, err)
			t.Cleanup(r.Close)
			line, col := v8Position(t, bundle, "(e){return e*2}")
			wantLine, wantCol := sourcePosition(t, source, "multiplyBy(other)", "multiplyBy")
			got, err := r.Resolve(context.Background(), symbolication.Lookup{Frame: symbolication.Frame{
				Function: "multiplyBy", File: "https://cdn.example.com/dist/app.min.js", Line: line, Column: col,
			}})
			require.NoError(t, err)
			assert.Equal(t, []symbolication.Frame{{Function: tt.want, File: "src/app.js", Line: wantLine, Column: wantCol}}, got)
		})
	}
}

// TestResolveErrorPositions: an error frame's position is where its
// function was executing. Its file, line and column are the mapping at or
// before it, and its function the scope around it in the bundle beside the
// map, whatever identifier precedes the position (the nearest named
// segment, which names profile frames, names none of these right).
func TestResolveErrorPositions(t *testing.T) {
	bundle, source := readString(t, bundlePath), readString(t, sourcePath)
	r, err := NewResolver(Options{Dirs: []string{"testdata"}, MaxCacheBytes: 1 << 20, ParseScopes: parseTestScopes})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	tests := []struct {
		name     string
		snippet  string // the bundle text at the executing position
		function string
		marker   string // the source line the position maps to
		ident    string // the token there
	}{
		{name: "a call in a function declaration", snippet: "f(r)&&e++", function: "computePrimes", marker: "if (isPrime(n))", ident: "isPrime"},
		{name: "an expression in an inner function", snippet: "t%e===0", function: "isPrime", marker: "candidate % d", ident: "candidate"},
		{name: "an arrow function assigned to a const", snippet: "e=e*31+t", function: "hashText", marker: "h = (h * 31", ident: "h ="},
		{name: "a class method with a kept name", snippet: "e*2}", function: "Matrix.multiplyBy", marker: "return other * 2", ident: "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, col := v8Position(t, bundle, tt.snippet)
			wantLine, wantCol := sourcePosition(t, source, tt.marker, tt.ident)
			got, err := r.Resolve(context.Background(), symbolication.Lookup{Executing: true, Frame: symbolication.Frame{
				Function: "x", File: "https://cdn.example.com/dist/app.min.js", Line: line, Column: col,
			}})
			require.NoError(t, err)
			assert.Equal(t, []symbolication.Frame{{Function: tt.function, File: "src/app.js", Line: wantLine, Column: wantCol}}, got)
		})
	}
}

// TestResolveWithoutBundle: a map without its bundle beside it names an
// error frame by the frame's own name, and a profile frame as before.
func TestResolveWithoutBundle(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dist"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dist", "app.min.js.map"), []byte(readString(t, bundlePath+".map")), 0o644))
	bundle := readString(t, bundlePath)
	r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20, ParseScopes: parseTestScopes})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	line, col := v8Position(t, bundle, "t%e===0")
	got, err := r.Resolve(context.Background(), symbolication.Lookup{Executing: true, Frame: symbolication.Frame{
		Function: "f", File: "/srv/dist/app.min.js", Line: line, Column: col,
	}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "f", got[0].Function)
	line, col = v8Position(t, bundle, "(t){for(let e=2;e*e")
	got, err = r.Resolve(context.Background(), symbolication.Lookup{Frame: symbolication.Frame{
		Function: "f", File: "/srv/dist/app.min.js", Line: line, Column: col,
	}})
	require.NoError(t, err)
	assert.Equal(t, "isPrime", got[0].Function)
}

// TestBundleOfStaysInTheMapsDirectory: a link beside the map that leads
// out of its directory is not read as its bundle.
func TestBundleOfStaysInTheMapsDirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.js"), []byte("function a(){}"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(dir, "app.js")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "own.js"), []byte("function a(){}"), 0o644))
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	tests := []struct {
		name, mapFile, file string
		want                string
	}{
		{"a link out of the directory", "app.js.map", "", ""},
		{"the map's file beside it", "x.map", "own.js", filepath.Join(real, "own.js")},
		{"the map's file with a path", "x.map", "../../own.js", filepath.Join(real, "own.js")},
		{"nothing there", "y.js.map", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := bundleOf(sourcesMapSource(filepath.Join(real, tt.mapFile)), &Map{File: tt.file})
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, got)
			assert.False(t, strings.HasPrefix(got, outside))
		})
	}
}

func sourcesMapSource(path string) sources.MapSource { return sources.MapSource{Path: path} }

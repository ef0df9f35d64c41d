package sourcemap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// scanned is the index of a directory, after its first scan.
func scanned(t testing.TB, dirs ...string) *dirIndex {
	t.Helper()
	r, err := NewResolver(Options{Dirs: dirs, MaxCacheBytes: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	idx, err := r.scanner.scans.Get(context.Background(), false)
	require.NoError(t, err)
	return idx
}

func TestTails(t *testing.T) {
	tests := []struct {
		path string
		want []string
	}{
		{"app.js", []string{"app.js"}},
		{"a/b/c.js", []string{"a/b/c.js", "b/c.js", "c.js"}},
		{strings.Repeat("x/", 40) + "c.js", func() []string {
			var out []string
			for k := maxPathTails; k >= 1; k-- {
				out = append(out, strings.Repeat("x/", k-1)+"c.js")
			}
			return out
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.path[:min(len(tt.path), 20)], func(t *testing.T) {
			assert.Equal(t, tt.want, tails(tt.path))
		})
	}
}

// TestLocateLongFramePath: a frame's file comes from the network. A path
// of 64,000 components (128 KiB) cost 45 s of CPU (126 s wall on this
// shared machine; 7.5 s on a quiet one) when every tail was joined to
// every directory and stat'ed; now the lookup tries the last
// maxPathTails tails in an index, and a file longer than maxPathBytes
// names nothing.
func TestLocateLongFramePath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "static/app.js.map"), "{}")
	idx := scanned(t, dir)
	deep := strings.Repeat("a/", 1000) + "static/app.js" // 2 KiB: within the bound
	tests := []struct {
		name    string
		file    string
		wantRel string // "" for not found
	}{
		{name: "64,000 components", file: "https://example.com/" + strings.Repeat("a/", 64_000) + "x.js"},
		{name: "1 MiB", file: "https://example.com/" + strings.Repeat("ab/", 350_000) + "static/app.js"},
		{name: "deep URL, file near its end", file: "https://example.com/" + deep, wantRel: "static/app.js.map"},
		{name: "over maxPathBytes", file: "https://example.com/" + strings.Repeat("a", maxPathBytes) + "/static/app.js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			src, err := idx.byPath(tt.file)
			elapsed := time.Since(start)
			t.Logf("%d bytes: %v", len(tt.file), elapsed)
			assert.Less(t, elapsed, 100*time.Millisecond, "the lookup is bounded whatever the path")
			if tt.wantRel == "" {
				require.ErrorIs(t, err, errNotFound)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantRel, src.rel)
		})
	}
}

// FuzzLocate: any frame file is looked up within the bounds, and an
// answer is a file of the index whose path ends as the frame's does.
func FuzzLocate(f *testing.F) {
	dir := f.TempDir()
	for _, p := range []string{"static/js/main.js.map", "app.js", "a/b/c.mjs.map"} {
		require.NoError(f, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(f, os.WriteFile(filepath.Join(dir, p), []byte("{}"), 0o644))
	}
	idx := scanned(f, dir)
	f.Add("https://example.com/static/js/main.js")
	f.Add("app:///a/b/c.mjs")
	f.Add("/srv/../../static//js/./main.js")
	f.Add("node:internal/timers")
	f.Add(strings.Repeat("../", 100) + "app.js")
	f.Fuzz(func(t *testing.T, file string) {
		if p := urlPath(file); p != "" {
			assert.LessOrEqual(t, len(tails(p)), maxPathTails, "tails tried")
		}
		src, err := idx.byPath(file)
		if err != nil {
			return
		}
		_, known := idx.files[src.rel]
		assert.True(t, known, "answer %q is a file of the index", src.rel)
		assert.True(t, sources.Within(dir, src.path) || strings.HasPrefix(src.path, dir), "answer %q is under the directory", src.path)
	})
}

// TestSymlinksStayWithinTheDirectories: a link is followed when its real
// path is within the configured directories, never when it leads out
// (before, a link to a directory outside was followed: the check was on
// the path as written).
func TestSymlinksStayWithinTheDirectories(t *testing.T) {
	mapJSON := readString(t, bundlePath+".map")
	bundle := readString(t, bundlePath)
	line, col := v8Position(t, bundle, "(t){for(let e=2;e*e")
	tests := []struct {
		name    string
		layout  func(t *testing.T, dir, outside string)
		file    string
		wantErr error
	}{
		{name: "linked directory outside", file: "https://x/static/app.js", wantErr: symbolication.ErrNoArtifact, layout: func(t *testing.T, dir, outside string) {
			writeFile(t, filepath.Join(outside, "app.js.map"), mapJSON)
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "static")))
		}},
		{name: "linked map outside", file: "https://x/app.js", wantErr: symbolication.ErrNoArtifact, layout: func(t *testing.T, dir, outside string) {
			writeFile(t, filepath.Join(outside, "secret.map"), mapJSON)
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret.map"), filepath.Join(dir, "app.js.map")))
		}},
		{name: "relative link climbing out", file: "https://x/app.js", wantErr: symbolication.ErrNoArtifact, layout: func(t *testing.T, dir, outside string) {
			writeFile(t, filepath.Join(outside, "secret.map"), mapJSON)
			rel, err := filepath.Rel(dir, filepath.Join(outside, "secret.map"))
			require.NoError(t, err)
			require.NoError(t, os.Symlink(rel, filepath.Join(dir, "app.js.map")))
		}},
		{name: "bundle's sourceMappingURL through a link out", file: "https://x/js/app.js", wantErr: symbolication.ErrNoArtifact, layout: func(t *testing.T, dir, outside string) {
			writeFile(t, filepath.Join(outside, "app.js.map"), mapJSON)
			writeFile(t, filepath.Join(dir, "js/app.js"), strings.Replace(bundle, "//# sourceMappingURL=app.min.js.map", "//# sourceMappingURL=../maps/app.js.map", 1))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "maps")))
		}},
		{name: "linked release directory inside", file: "https://x/current/app.js", layout: func(t *testing.T, dir, _ string) {
			writeFile(t, filepath.Join(dir, "releases/1.2.3/app.js.map"), mapJSON)
			require.NoError(t, os.Symlink("releases/1.2.3", filepath.Join(dir, "current")))
		}},
		{name: "link loop is not walked forever", file: "https://x/app.js", layout: func(t *testing.T, dir, _ string) {
			writeFile(t, filepath.Join(dir, "app.js.map"), mapJSON)
			require.NoError(t, os.Symlink(".", filepath.Join(dir, "loop")))
			require.NoError(t, os.Symlink(dir, filepath.Join(dir, "sub")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			tt.layout(t, dir, outside)
			r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20})
			require.NoError(t, err)
			t.Cleanup(r.Close)
			got, err := r.Resolve(context.Background(), symbolication.Lookup{Frame: symbolication.Frame{File: tt.file, Line: line, Column: col}})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "isPrime", got[0].Function)
		})
	}
}

// TestFIFODoesNotBlock: a FIFO named like a map or a bundle blocked the
// debug-id scan in open(2) while it held the resolver's lock (the frame
// never got an answer). A scan opens regular files only, and Close stops
// a scan under way.
func TestFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.js.map", "b.js", "c/d.mjs"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, name), 0o644))
	}
	writeFile(t, filepath.Join(dir, "dist/app.min.js.map"), readString(t, bundlePath+".map"))
	bundle := readString(t, bundlePath)
	line, col := v8Position(t, bundle, "(t){for(let e=2;e*e")
	r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20})
	require.NoError(t, err)
	defer r.Close()
	tests := []struct {
		name    string
		in      symbolication.Lookup
		wantErr error
	}{
		{name: "unknown debug id", in: symbolication.Lookup{DebugID: "1caf40bd-96e3-4c30-bdb2-f35dc2b5ec6c", Frame: symbolication.Frame{File: "https://x/nothing.js", Line: 1, Column: 1}}, wantErr: symbolication.ErrNoArtifact},
		{name: "the FIFO's own name", in: symbolication.Lookup{Frame: symbolication.Frame{File: "https://x/a.js", Line: 1, Column: 1}}, wantErr: symbolication.ErrNoArtifact},
		{name: "a map beside them", in: symbolication.Lookup{DebugID: bundleDebugIDOf(t, bundle), Frame: symbolication.Frame{File: "https://x/dist/app.min.js", Line: line, Column: col}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			got, err := r.Resolve(ctx, tt.in)
			require.NoError(t, ctx.Err(), "Resolve returned in time")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "isPrime", got[0].Function)
		})
	}
}

// TestMapLargerThanTheBoundIsNotRead: a 10 GB (sparse) map is refused by
// its size before any byte is read; before, the first MaxArtifactBytes+1
// bytes were read and then refused.
func TestMapLargerThanTheBoundIsNotRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.js.map")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(10<<30))
	require.NoError(t, f.Close())
	r, err := NewResolver(Options{Dirs: []string{dir}, MaxCacheBytes: 1 << 20, MaxArtifactBytes: 1 << 20})
	require.NoError(t, err)
	defer r.Close()
	start := time.Now()
	_, err = r.Resolve(context.Background(), symbolication.Lookup{Frame: symbolication.Frame{File: "https://x/huge.js", Line: 1, Column: 1}})
	require.ErrorIs(t, err, sources.ErrTooLarge)
	assert.Less(t, time.Since(start), time.Second)
}

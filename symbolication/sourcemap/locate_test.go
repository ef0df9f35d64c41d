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

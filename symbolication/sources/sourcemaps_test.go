package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanned is the index of source map directories, after its first scan.
func scanned(t testing.TB, dirs ...string) *mapIndex {
	t.Helper()
	s, err := NewSourceMaps(dirs, 1<<20, time.Hour)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	idx, err := s.scans.Get(context.Background(), false)
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
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "static"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "static/app.js.map"), []byte("{}"), 0o644))
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
				require.ErrorIs(t, err, errNoMap)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantRel, src.Rel)
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
		_, known := idx.files[src.Rel]
		assert.True(t, known, "answer %q is a file of the index", src.Rel)
		assert.True(t, Within(dir, src.Path) || strings.HasPrefix(src.Path, dir), "answer %q is under the directory", src.Path)
	})
}

// FuzzSourceMappingURL: the comment reader takes any bundle tail.
func FuzzSourceMappingURL(f *testing.F) {
	f.Add([]byte("x()\n//# sourceMappingURL=app.js.map\n"))
	f.Add([]byte("//@ sourceMappingURL=data:application/json;base64,e30=   \r\n"))
	f.Fuzz(func(t *testing.T, tail []byte) {
		lastSourceMappingURL(tail)
		urlPath(string(tail))
	})
}

// findMapByStat is the path lookup as it was before the index: every tail
// of the path joined to every directory and stat'ed. It is the baseline
// of BenchmarkLocate.
func findMapByStat(dirs []string, file string) bool {
	p := urlPath(file)
	for p != "" {
		for _, dir := range dirs {
			bundle := filepath.Join(dir, filepath.FromSlash(p))
			if st, err := os.Stat(bundle + ".map"); err == nil && st.Mode().IsRegular() {
				return true
			}
			if st, err := os.Stat(bundle); err == nil && st.Mode().IsRegular() {
				return true
			}
		}
		i := strings.IndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[i+1:]
	}
	return false
}

// BenchmarkLocate is one frame's path lookup: in the scan's index beside
// stat'ing every tail in every directory as before it, for a URL that
// names a map and for a 2 KiB path of 1,000 components that names none.
func BenchmarkLocate(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "static/js"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "static/js/main.js.map"), []byte("{}"), 0o644); err != nil {
		b.Fatal(err)
	}
	idx := scanned(b, dir)
	for _, file := range []struct{ name, url string }{
		{"hit", "https://example.com/static/js/main.js"},
		{"miss-1000-components", "https://example.com/" + strings.Repeat("a/", 1000) + "x.js"},
	} {
		b.Run(file.name+"/index", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = idx.byPath(file.url)
			}
		})
		b.Run(file.name+"/stat", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				findMapByStat([]string{dir}, file.url)
			}
		})
	}
}

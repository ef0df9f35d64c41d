package native

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	idA = "aaaa000000000000000000000000000000000001"
	idB = "bbbb000000000000000000000000000000000002"
)

// fakeDebuginfod serves debug files by build id over the debuginfod API,
// counting requests per path; a file of an unknown id is a 404.
type fakeDebuginfod struct {
	files    map[string][]byte
	chunked  bool          // no Content-Length
	delay    time.Duration // before answering
	status   int           // answer every request with this status when set
	mu       sync.Mutex
	requests map[string]int
}

func (f *fakeDebuginfod) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.URL.Path]++
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.status != 0 {
		http.Error(w, "unavailable", f.status)
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/buildid/")
	id, ok2 := strings.CutSuffix(id, "/debuginfo")
	data, known := f.files[id]
	if !ok || !ok2 || !known {
		http.NotFound(w, r)
		return
	}
	if f.chunked {
		w.(http.Flusher).Flush() // headers out without a length
	}
	_, _ = w.Write(data)
}

func (f *fakeDebuginfod) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests["/buildid/"+id+"/debuginfo"]
}

func newFake(t *testing.T, files map[string][]byte) (*fakeDebuginfod, *httptest.Server) {
	f := &fakeDebuginfod{files: files, requests: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func elfWithFunc(t *testing.T, id string, filler int) []byte {
	return writeELF(t, id, 0, []testFunc{{"handler_" + id[:4], 0x1000, 0x40}}, filler)
}

// TestDebuginfodFetchAndCache: a file is fetched once, then served from
// memory, then from the cache directory by a new Resolver.
func TestDebuginfodFetchAndCache(t *testing.T) {
	fake, srv := newFake(t, map[string][]byte{idA: elfWithFunc(t, idA, 0)})
	cache := t.TempDir()
	opts := Options{DebuginfodURLs: []string{srv.URL}, CacheDir: cache}
	ctx := context.Background()
	want := []Frame{{Function: "handler_aaaa"}}

	r, err := NewResolver(opts)
	require.NoError(t, err)
	for range 3 {
		got, err := r.Resolve(ctx, strings.ToUpper(idA), 0x1010)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Equal(t, 1, fake.count(idA), "parsed once, kept in memory")
	require.NoError(t, r.Close())
	assert.FileExists(t, filepath.Join(cache, idA+cacheSuffix))

	r2, err := NewResolver(opts)
	require.NoError(t, err)
	got, err := r2.Resolve(ctx, idA, 0x1010)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 1, fake.count(idA), "the cache directory outlives the Resolver")
}

// TestDebuginfodServers: servers are asked in order; a 404 moves on, and a
// build id no server has is remembered for a while.
func TestDebuginfodServers(t *testing.T) {
	empty, emptySrv := newFake(t, nil)
	full, fullSrv := newFake(t, map[string][]byte{idA: elfWithFunc(t, idA, 0)})
	r, err := NewResolver(Options{DebuginfodURLs: []string{emptySrv.URL, fullSrv.URL + "/"}, CacheDir: t.TempDir()})
	require.NoError(t, err)
	ctx := context.Background()

	got, err := r.Resolve(ctx, idA, 0x1000)
	require.NoError(t, err)
	assert.Equal(t, []Frame{{Function: "handler_aaaa"}}, got)
	assert.Equal(t, 1, empty.count(idA))
	assert.Equal(t, 1, full.count(idA))

	for range 2 {
		_, err = r.Resolve(ctx, idB, 0x1000)
		assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
	}
	assert.Equal(t, 1, empty.count(idB), "a miss is remembered")
	assert.Equal(t, 1, full.count(idB))
}

func TestDebuginfodFailures(t *testing.T) {
	big := elfWithFunc(t, idA, 64<<10)
	tests := []struct {
		name    string
		fake    *fakeDebuginfod
		max     int64
		timeout time.Duration
		wantErr string
	}{
		{"server error", &fakeDebuginfod{status: http.StatusServiceUnavailable}, 0, 0, "503"},
		{"too large by Content-Length", &fakeDebuginfod{files: map[string][]byte{idA: big}}, 32 << 10, 0, "larger than the cache"},
		{"too large while streaming", &fakeDebuginfod{files: map[string][]byte{idA: big}, chunked: true}, 32 << 10, 0, "larger than the cache"},
		{"not an ELF file", &fakeDebuginfod{files: map[string][]byte{idA: []byte("<html>login</html>")}}, 0, 0, "not an ELF file"},
		{"another build id", &fakeDebuginfod{files: map[string][]byte{idA: elfWithFunc(t, idB, 0)}}, 0, 0, "build id mismatch"},
		{"timeout", &fakeDebuginfod{files: map[string][]byte{idA: big}, delay: 5 * time.Second}, 0, 200 * time.Millisecond, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fake.requests = map[string]int{}
			srv := httptest.NewServer(tt.fake)
			defer srv.Close()
			cache := t.TempDir()
			client := &http.Client{Timeout: tt.timeout}
			r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: cache, MaxCacheBytes: tt.max, HTTPClient: client})
			require.NoError(t, err)
			_, err = r.Resolve(context.Background(), idA, 0x1000)
			require.ErrorContains(t, err, tt.wantErr)
			assert.False(t, errors.Is(err, ErrNotFound))
			entries, err := os.ReadDir(cache)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing kept, no temporary file left")
		})
	}
}

// TestDebuginfodEviction: the cache directory stays within MaxCacheBytes,
// the least recently used file going first.
func TestDebuginfodEviction(t *testing.T) {
	a, b := elfWithFunc(t, idA, 20<<10), elfWithFunc(t, idB, 20<<10)
	fake, srv := newFake(t, map[string][]byte{idA: a, idB: b})
	cache := t.TempDir()
	max := int64(len(a) + len(b)/2) // one file fits, not two
	r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: cache, MaxCacheBytes: max})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = r.Resolve(ctx, idA, 0x1000)
	require.NoError(t, err)
	_, err = r.Resolve(ctx, idB, 0x1000)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(cache, idA+cacheSuffix))
	assert.FileExists(t, filepath.Join(cache, idB+cacheSuffix))
	assert.LessOrEqual(t, r.fetcher.cachedBytes(), max)

	// A new Resolver over a directory above its bound evicts at start.
	r2, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: cache, MaxCacheBytes: 100})
	require.NoError(t, err)
	assert.Zero(t, r2.fetcher.cachedBytes())
	assert.NoFileExists(t, filepath.Join(cache, idB+cacheSuffix))
	assert.Equal(t, 1, fake.count(idA))
}

// TestDebuginfodConcurrentAndCanceled: concurrent callers share one
// download; a canceled request is not remembered as a miss.
func TestDebuginfodConcurrentAndCanceled(t *testing.T) {
	fake, srv := newFake(t, map[string][]byte{idA: elfWithFunc(t, idA, 0)})
	fake.delay = 300 * time.Millisecond
	r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: t.TempDir()})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = r.Resolve(ctx, idA, 0x1000)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Go(func() {
			frames, err := r.Resolve(context.Background(), idA, 0x1000)
			if err == nil && len(frames) == 1 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(8), ok.Load())
	assert.Equal(t, 2, fake.count(idA), "the canceled attempt and one shared download")
}

// TestMemoryBound: parsed files stay within MaxMemoryBytes; a file that
// alone exceeds it is refused with an error, not parsed on every call.
func TestMemoryBound(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i, id := range []string{idA, idB, "cccc000000000000000000000000000000000003"} {
		funcs := make([]testFunc, []int{100, 150, 1000}[i])
		for j := range funcs {
			funcs[j] = testFunc{name: strings.Repeat("f", 40) + id[:4], addr: 0x1000 + uint64(j)*16, size: 16}
		}
		layoutBytes(t, dir, id, writeELF(t, id, 0, funcs, 0))
		ids = append(ids, id)
	}
	sizes := make([]int64, len(ids))
	for i, id := range ids {
		img, err := loadImageFile(filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug"))
		require.NoError(t, err)
		sizes[i] = img.size
	}
	r, err := NewResolver(Options{DebugDirs: []string{dir}, MaxMemoryBytes: sizes[0] + sizes[1]})
	require.NoError(t, err)
	ctx := context.Background()
	for _, id := range ids[:2] {
		_, err := r.Resolve(ctx, id, 0x1000)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, r.cache.len())
	_, err = r.Resolve(ctx, ids[2], 0x1000)
	require.ErrorContains(t, err, "larger than the cache", "the third file alone exceeds the bound")
	assert.LessOrEqual(t, r.cache.used, r.cache.max)

	r, err = NewResolver(Options{DebugDirs: []string{dir}, MaxMemoryBytes: sizes[1] + sizes[0]/2})
	require.NoError(t, err)
	for _, id := range ids[:2] {
		_, err := r.Resolve(ctx, id, 0x1000)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, r.cache.len(), "the least recently used file was evicted")
	_, ok := r.cache.get(ids[1])
	assert.True(t, ok)
}

func layoutBytes(t *testing.T, dir, id string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

// TestWaiterOutlivesCanceledLoader: a caller waiting on a load whose own
// caller gives up loads the file itself instead of inheriting the
// cancellation.
func TestWaiterOutlivesCanceledLoader(t *testing.T) {
	fake, srv := newFake(t, map[string][]byte{idA: elfWithFunc(t, idA, 0)})
	fake.delay = 300 * time.Millisecond
	r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: t.TempDir()})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	loaderErr := make(chan error, 1)
	go func() {
		_, err := r.Resolve(ctx, idA, 0x1000)
		loaderErr <- err
	}()
	require.Eventually(t, func() bool { return fake.count(idA) == 1 }, 5*time.Second, time.Millisecond, "the first call is loading")
	frames, err := r.Resolve(context.Background(), idA, 0x1000)
	require.NoError(t, err)
	assert.Equal(t, []Frame{{Function: "handler_aaaa"}}, frames)
	assert.ErrorIs(t, <-loaderErr, context.DeadlineExceeded)
	assert.Equal(t, 2, fake.count(idA))
}

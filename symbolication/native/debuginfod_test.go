package native

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
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
	// inFlight and maxInFlight count the requests being answered.
	inFlight, maxInFlight int
}

func (f *fakeDebuginfod) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.URL.Path]++
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
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

// total is the number of requests, and the most answered at once.
func (f *fakeDebuginfod) total() (requests, maxInFlight int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.requests {
		requests += n
	}
	return requests, f.maxInFlight
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
		got, err := r.ResolveAddress(ctx, strings.ToUpper(idA), 0x1010)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Equal(t, 1, fake.count(idA), "parsed once, kept in memory")
	require.NoError(t, r.Close())
	assert.FileExists(t, filepath.Join(cache, idA+sources.CacheSuffix))

	r2, err := NewResolver(opts)
	require.NoError(t, err)
	got, err := r2.ResolveAddress(ctx, idA, 0x1010)
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

	got, err := r.ResolveAddress(ctx, idA, 0x1000)
	require.NoError(t, err)
	assert.Equal(t, []Frame{{Function: "handler_aaaa"}}, got)
	assert.Equal(t, 1, empty.count(idA))
	assert.Equal(t, 1, full.count(idA))

	for range 2 {
		_, err = r.ResolveAddress(ctx, idB, 0x1000)
		assert.ErrorIs(t, err, ErrNotFound)
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
		// wantFailure is what the cache remembers it as.
		wantFailure symbolication.Failure
	}{
		{"server error", &fakeDebuginfod{status: http.StatusServiceUnavailable}, 0, 0, "503", symbolication.FailureFetch},
		{"too large by Content-Length", &fakeDebuginfod{files: map[string][]byte{idA: big}}, 32 << 10, 0, "larger than the cache", symbolication.FailureFetch},
		{"too large while streaming", &fakeDebuginfod{files: map[string][]byte{idA: big}, chunked: true}, 32 << 10, 0, "larger than the cache", symbolication.FailureFetch},
		{"not an ELF file", &fakeDebuginfod{files: map[string][]byte{idA: []byte("<html>login</html>")}}, 0, 0, "not an ELF file", symbolication.FailureMalformed},
		{"another build id", &fakeDebuginfod{files: map[string][]byte{idA: elfWithFunc(t, idB, 0)}}, 0, 0, "build id mismatch", symbolication.FailureMalformed},
		{"timeout", &fakeDebuginfod{files: map[string][]byte{idA: big}, delay: 5 * time.Second}, 0, 200 * time.Millisecond, "Timeout", symbolication.FailureTimeout},
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
			_, err = r.ResolveAddress(context.Background(), idA, 0x1000)
			require.ErrorContains(t, err, tt.wantErr)
			assert.NotErrorIs(t, err, ErrNotFound)
			assert.Equal(t, tt.wantFailure, symbolication.FailureOf(err))
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
	_, err = r.ResolveAddress(ctx, idA, 0x1000)
	require.NoError(t, err)
	_, err = r.ResolveAddress(ctx, idB, 0x1000)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(cache, idA+sources.CacheSuffix))
	assert.FileExists(t, filepath.Join(cache, idB+sources.CacheSuffix))
	assert.LessOrEqual(t, r.fetcher.CachedBytes(), max)

	// A new Resolver over a directory above its bound evicts at start.
	r2, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: cache, MaxCacheBytes: 100})
	require.NoError(t, err)
	assert.Zero(t, r2.fetcher.CachedBytes())
	assert.NoFileExists(t, filepath.Join(cache, idB+sources.CacheSuffix))
	assert.Equal(t, 1, fake.count(idA))
}

// TestDebuginfodConcurrentAndCanceled: concurrent callers share one
// download; a caller that gives up gets ErrPending and leaves the download
// going, and it is not remembered as a miss.
func TestDebuginfodConcurrentAndCanceled(t *testing.T) {
	fake, srv := newFake(t, map[string][]byte{idA: elfWithFunc(t, idA, 0)})
	fake.delay = 300 * time.Millisecond
	r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: t.TempDir()})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = r.ResolveAddress(ctx, idA, 0x1000)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, ErrPending)

	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Go(func() {
			frames, err := r.ResolveAddress(context.Background(), idA, 0x1000)
			if err == nil && len(frames) == 1 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(8), ok.Load())
	assert.Equal(t, 1, fake.count(idA), "one download, outliving the caller that gave up, shared by the others")
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
		_, err := r.ResolveAddress(ctx, id, 0x1000)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, r.CacheStats().Entries)
	_, err = r.ResolveAddress(ctx, ids[2], 0x1000)
	require.ErrorContains(t, err, "larger than the cache", "the third file alone exceeds the bound")
	assert.LessOrEqual(t, r.CacheStats().Bytes, sizes[0]+sizes[1])

	r, err = NewResolver(Options{DebugDirs: []string{dir}, MaxMemoryBytes: sizes[1] + sizes[0]/2})
	require.NoError(t, err)
	for _, id := range ids[:2] {
		_, err := r.ResolveAddress(ctx, id, 0x1000)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, r.CacheStats().Entries, "the least recently used file was evicted")
	assert.Equal(t, int64(1), r.CacheStats().Evictions)
	assert.True(t, r.images.Holds(ids[1]))
}

func layoutBytes(t *testing.T, dir, id string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

// TestWaiterOutlivesCanceledLoader: a caller waiting on a load whose first
// caller gives up gets the file of that same load: the load does not
// inherit any caller's cancellation.
func TestWaiterOutlivesCanceledLoader(t *testing.T) {
	fake, srv := newFake(t, map[string][]byte{idA: elfWithFunc(t, idA, 0)})
	fake.delay = 300 * time.Millisecond
	r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: t.TempDir()})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	loaderErr := make(chan error, 1)
	go func() {
		_, err := r.ResolveAddress(ctx, idA, 0x1000)
		loaderErr <- err
	}()
	require.Eventually(t, func() bool { return fake.count(idA) == 1 }, 5*time.Second, time.Millisecond, "the first call is loading")
	frames, err := r.ResolveAddress(context.Background(), idA, 0x1000)
	require.NoError(t, err)
	assert.Equal(t, []Frame{{Function: "handler_aaaa"}}, frames)
	assert.ErrorIs(t, <-loaderErr, context.DeadlineExceeded)
	assert.Equal(t, 1, fake.count(idA))
}

// TestInventedBuildIDsDoNotHoldTheCaller: 40 made-up build ids in one
// batch made 40 sequential requests, one at a time (8.1 s against a
// server answering in 0.2 s; each may take the client's timeout). Now the
// batch prefetches them within its fetch limit, at most
// MaxConcurrentFetches in flight, waits no longer than its context, and
// what was not fetched by then is pending, not remembered as missing: a
// later batch resolves it.
func TestInventedBuildIDsDoNotHoldTheCaller(t *testing.T) {
	const (
		ids      = 40
		perBatch = 16
		inFlight = 4
		budget   = 500 * time.Millisecond
	)
	real := fmt.Sprintf("%040x", ids) // the last one exists
	fake, srv := newFake(t, map[string][]byte{real: elfWithFunc(t, real, 0)})
	fake.delay = 200 * time.Millisecond
	r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: t.TempDir(), MaxConcurrentFetches: inFlight})
	require.NoError(t, err)
	defer r.Close()

	batch := func() (pending, notFound, resolved int, elapsed time.Duration) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(WithFetchLimit(context.Background(), perBatch), budget)
		defer cancel()
		var list []string
		for i := range ids {
			list = append(list, fmt.Sprintf("%040x", i+1))
		}
		// The real one last: it is past the first batch's fetch limit.
		for _, id := range list {
			r.Prefetch(ctx, id)
		}
		for _, id := range list {
			frames, err := r.ResolveAddress(ctx, id, 0x1000)
			switch {
			case errors.Is(err, ErrPending):
				pending++
			case errors.Is(err, ErrNotFound):
				notFound++
			case err == nil && len(frames) == 1:
				resolved++
			default:
				t.Errorf("build id %s: %v %v", id, frames, err)
			}
		}
		return pending, notFound, resolved, time.Since(start)
	}

	pending, notFound, resolved, elapsed := batch()
	t.Logf("first batch: %v, %d pending, %d not found, %d resolved", elapsed, pending, notFound, resolved)
	assert.Less(t, elapsed, budget+300*time.Millisecond, "the batch waits no longer than its budget")
	assert.Zero(t, resolved)
	assert.GreaterOrEqual(t, pending, ids-perBatch, "ids past the fetch limit are pending, not missing")
	require.Eventually(t, func() bool { n, _ := fake.total(); return n == perBatch }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // the fetches already started end
	requests, most := fake.total()
	assert.Equal(t, perBatch, requests, "the batch started its fetch limit and no more")
	assert.LessOrEqual(t, most, inFlight, "requests in flight")
	assert.Greater(t, most, 1, "fetches run concurrently")

	// Later batches fetch the rest, 16 at a time, and resolve the real one.
	deadline := time.Now().Add(20 * time.Second)
	for resolved == 0 && time.Now().Before(deadline) {
		_, _, resolved, _ = batch()
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, 1, resolved, "a later batch resolves what was fetched in the background")
	requests, most = fake.total()
	assert.LessOrEqual(t, requests, ids, "each invented id asked once: a 404 is remembered")
	assert.LessOrEqual(t, most, inFlight)
}

// TestBuildIDLayoutLinks: a .build-id link is followed where it leads (the
// layout links to binaries elsewhere by design) to a regular file that
// carries the build id asked for, never to another file; a FIFO there is
// skipped without blocking; a file above MaxFileBytes is refused by its
// size.
func TestBuildIDLayoutLinks(t *testing.T) {
	elf := elfWithFunc(t, idA, 0)
	tests := []struct {
		name     string
		layout   func(t *testing.T, dir, outside string)
		maxBytes int64
		wantErr  error
	}{
		{name: "link within", layout: func(t *testing.T, dir, _ string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "app.debug"), elf, 0o644))
			linkBuildID(t, dir, "../../app.debug")
		}},
		{name: "link to the binary elsewhere", layout: func(t *testing.T, dir, outside string) {
			require.NoError(t, os.WriteFile(filepath.Join(outside, "app"), elf, 0o644))
			linkBuildID(t, dir, filepath.Join(outside, "app"))
		}},
		{name: "link to a file of another build id", wantErr: errBuildIDMismatch, layout: func(t *testing.T, dir, outside string) {
			require.NoError(t, os.WriteFile(filepath.Join(outside, "other"), elfWithFunc(t, idB, 0), 0o644))
			linkBuildID(t, dir, filepath.Join(outside, "other"))
		}},
		{name: "link to /dev/zero", wantErr: ErrNotFound, layout: func(t *testing.T, dir, _ string) {
			linkBuildID(t, dir, "/dev/zero")
		}},
		{name: "FIFO", wantErr: ErrNotFound, layout: func(t *testing.T, dir, _ string) {
			p := filepath.Join(dir, ".build-id", idA[:2], idA[2:]+".debug")
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		}},
		{name: "over MaxFileBytes", maxBytes: int64(len(elf)) - 1, wantErr: sources.ErrTooLarge, layout: func(t *testing.T, dir, _ string) {
			layoutBytes(t, dir, idA, elf)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			tt.layout(t, dir, outside)
			r, err := NewResolver(Options{DebugDirs: []string{dir}, MaxFileBytes: tt.maxBytes})
			require.NoError(t, err)
			defer r.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			frames, err := r.ResolveAddress(ctx, idA, 0x1000)
			require.NoError(t, ctx.Err(), "Resolve returned in time")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []Frame{{Function: "handler_aaaa"}}, frames)
		})
	}
}

// linkBuildID links idA's debug file in dir's .build-id tree to target.
func linkBuildID(t *testing.T, dir, target string) {
	t.Helper()
	p := filepath.Join(dir, ".build-id", idA[:2], idA[2:]+".debug")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink(target, p))
}

// TestDebugFileDeployedWhileRunning: a build id no file has is looked for
// again after the rescan interval, and a debug file copied into a debug
// directory meanwhile (anywhere below it, not in the .build-id layout) is
// found. Before, the directories were indexed once, at start.
func TestDebugFileDeployedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	r, err := NewResolver(Options{DebugDirs: []string{dir}, RescanInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	defer r.Close()
	ctx := context.Background()
	_, err = r.ResolveAddress(ctx, idA, 0x1000)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, err, symbolication.ErrNoArtifact)

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "release-2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release-2", "libapp.so.debug"), elfWithFunc(t, idA, 0), 0o644))
	_, err = r.ResolveAddress(ctx, idA, 0x1000)
	require.ErrorIs(t, err, ErrNotFound, "within the interval the miss is remembered")

	require.Eventually(t, func() bool {
		frames, err := r.ResolveAddress(ctx, idA, 0x1000)
		return err == nil && len(frames) == 1 && frames[0].Function == "handler_aaaa"
	}, 5*time.Second, 20*time.Millisecond, "the deployed file is found after a rescan")
}

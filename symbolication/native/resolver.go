package native

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Resolver. The zero value resolves nothing: name the
// directories or servers to look in.
type Options struct {
	// DebugDirs are searched for debug files by build id: first the
	// `.build-id/xx/rest.debug` layout (and `.build-id/xx/rest`, the binary
	// itself), then every ELF and Mach-O file found under them (dSYM
	// bundles included) when the Resolver was made, indexed by build id or
	// UUID.
	DebugDirs []string
	// DebuginfodURLs are debuginfod servers, asked in order when no local
	// file has DWARF or a symbol table. No network access without them.
	DebuginfodURLs []string
	// CacheDir holds the files fetched from DebuginfodURLs (required with
	// them); the client owns the `*.debuginfo` files in it.
	CacheDir string
	// MaxCacheBytes bounds CacheDir's fetched files (default 1 GiB); a
	// single larger file is refused.
	MaxCacheBytes int64
	// HTTPClient makes the debuginfod requests (default: a client with a
	// 2 minute timeout). Each request also ends with Resolve's context.
	HTTPClient *http.Client
	// MaxMemoryBytes bounds the parsed debug files kept in memory (default
	// 256 MiB), least recently used first out. A file that alone exceeds it
	// is refused with an error rather than parsed on every call.
	MaxMemoryBytes int64
	// MaxFileBytes bounds one debug file, local or fetched: a larger one
	// is refused by its size before it is read (0: no bound but
	// MaxCacheBytes for fetched files).
	MaxFileBytes int64
	// MaxConcurrentFetches bounds the debuginfod requests in flight
	// (default 4); the other fetches wait for a slot.
	MaxConcurrentFetches int
	// MaxPendingLoads bounds the build ids being loaded (read, parsed or
	// fetched) or waiting to be (default 64). Past it, Resolve answers
	// ErrPending at once for a new build id, which is tried again later.
	MaxPendingLoads int
}

const (
	defaultMaxCacheBytes  = 1 << 30
	defaultMaxMemoryBytes = 256 << 20
	defaultHTTPTimeout    = 2 * time.Minute
	defaultFetches        = 4
	defaultPendingLoads   = 64
	// missTTL is how long a build id without a usable file is remembered:
	// a profile names the same missing library in every sample.
	missTTL = time.Minute
	// maxMisses bounds the remembered misses (build ids come from input).
	maxMisses = 10_000
)

// ErrNotFound is returned (wrapped) when no debug file has the build id.
var ErrNotFound = errors.New("no debug file for build id")

// ErrPending is returned (wrapped) when the debug file of a build id is
// being loaded or fetched and the caller's context ended first, or when
// no load could be started now (MaxPendingLoads, or the fetch limit of
// the caller's batch, see WithFetchLimit). The load goes on in the
// background; a later call finds its result.
var ErrPending = errors.New("debug file not loaded yet")

// Resolver turns addresses in ELF images, named by build id, into
// source-level frames. It is safe for concurrent use.
type Resolver struct {
	index      *debugIndex
	fetcher    *debuginfod // nil without servers
	maxPending int

	// ctx is the loads' context: a load goes on when its callers give up,
	// and ends with Close.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	cache   *lru
	loading map[string]*loadCall
	misses  map[string]miss
}

type loadCall struct {
	done chan struct{}
	img  *image
	err  error
}

type miss struct {
	err   error
	until time.Time
}

// NewResolver scans the debug directories and prepares the debuginfod
// cache. It makes no network request.
func NewResolver(opts Options) (*Resolver, error) {
	if opts.MaxMemoryBytes <= 0 {
		opts.MaxMemoryBytes = defaultMaxMemoryBytes
	}
	if opts.MaxCacheBytes <= 0 {
		opts.MaxCacheBytes = defaultMaxCacheBytes
	}
	if opts.MaxConcurrentFetches <= 0 {
		opts.MaxConcurrentFetches = defaultFetches
	}
	if opts.MaxPendingLoads <= 0 {
		opts.MaxPendingLoads = defaultPendingLoads
	}
	idx, err := newDebugIndex(opts.DebugDirs, opts.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Resolver{index: idx, maxPending: opts.MaxPendingLoads, ctx: ctx, cancel: cancel,
		cache: newLRU(opts.MaxMemoryBytes), loading: map[string]*loadCall{}, misses: map[string]miss{}}
	if len(opts.DebuginfodURLs) > 0 {
		for _, s := range opts.DebuginfodURLs {
			if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("native: debuginfod URL %q: want http(s)://host[/path]", s)
			}
		}
		if opts.CacheDir == "" {
			return nil, errors.New("native: debuginfod URLs need a CacheDir")
		}
		client := opts.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: defaultHTTPTimeout}
		}
		if r.fetcher, err = newDebuginfod(opts.DebuginfodURLs, client, opts.CacheDir, opts.MaxCacheBytes, opts.MaxFileBytes, opts.MaxConcurrentFetches); err != nil {
			cancel()
			return nil, fmt.Errorf("native: %w", err)
		}
	}
	return r, nil
}

// Resolve returns the frames at addr in the image named buildID,
// innermost first: inlined functions, then the function that contains
// them. buildID is an ELF image's GNU build id (hex, as in
// process.executable.build_id.gnu or Sentry's code_id) or a Mach-O image's
// LC_UUID (Sentry's debug_id of a macho image); case and hyphens do not
// matter.
//
// addr is a virtual address of the image file: the address space of its
// program headers (load commands), symbols and DWARF. The OpenTelemetry eBPF profiler
// reports addresses so; for Sentry's absolute instruction_addr use
// ResolveAbsolute. Return addresses of caller frames are not adjusted:
// pass addr-1 for them to land in the call instruction.
//
// No frames and no error: the image is known but nothing covers addr. An
// error wrapping ErrNotFound: no file has the build id.
func (r *Resolver) Resolve(ctx context.Context, buildID string, addr uint64) ([]Frame, error) {
	img, err := r.image(ctx, buildID)
	if err != nil {
		return nil, err
	}
	return img.resolve(addr), nil
}

// ResolveAbsolute resolves a Sentry native frame: instruction_addr is
// where the code ran and imageAddr the image's image_addr, where its first
// mapping was loaded. The image address is instructionAddr - imageAddr
// plus what Sentry calls image_vmaddr, read from the file since SDKs leave
// it out: the page-aligned address of an ELF file's first loadable segment
// (0 for PIE executables and shared libraries, 0x400000 for classic x86-64
// executables), or a Mach-O file's __TEXT segment (0 for dylibs,
// 0x100000000 for 64-bit executables).
func (r *Resolver) ResolveAbsolute(ctx context.Context, buildID string, instructionAddr, imageAddr uint64) ([]Frame, error) {
	if instructionAddr < imageAddr {
		return nil, fmt.Errorf("native: instruction address %#x below image address %#x", instructionAddr, imageAddr)
	}
	img, err := r.image(ctx, buildID)
	if err != nil {
		return nil, err
	}
	return img.resolve(instructionAddr - imageAddr + img.imageVMA), nil
}

// Close stops the loads and fetches under way and drops what the Resolver
// holds in memory. The debuginfod cache directory keeps its files for the
// next Resolver.
func (r *Resolver) Close() error {
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cache = newLRU(r.cache.max)
	r.misses = map[string]miss{}
	return nil
}

// fetchLimitKey is the context key of WithFetchLimit.
type fetchLimitKey struct{}

// WithFetchLimit returns a context under which Resolve starts at most n
// loads that need a debuginfod server (a build id no local file serves
// well); past them it answers ErrPending. A batch of frames shares one
// such context, so that a batch naming many unknown build ids fetches a
// bounded number of them and the next batches the rest.
func WithFetchLimit(ctx context.Context, n int) context.Context {
	left := &atomic.Int64{}
	left.Store(int64(n))
	return context.WithValue(ctx, fetchLimitKey{}, left)
}

// takeFetch spends one fetch of ctx's limit; true when it has none.
func takeFetch(ctx context.Context) bool {
	left, ok := ctx.Value(fetchLimitKey{}).(*atomic.Int64)
	return !ok || left.Add(-1) >= 0
}

// image returns the loaded image for a build id. A load runs in the
// background, once however many callers ask at the same time, and outlives
// them: a caller waits for it while its context allows, then gets
// ErrPending.
func (r *Resolver) image(ctx context.Context, buildID string) (*image, error) {
	id := strings.ToLower(strings.ReplaceAll(buildID, "-", ""))
	if !validBuildID(id) {
		return nil, fmt.Errorf("native: build id %q: want 2 to 64 hex bytes", buildID)
	}
	img, call, err := r.known(id)
	if img != nil || err != nil {
		return img, err
	}
	if call == nil {
		if call, err = r.startLoad(ctx, id); err != nil {
			return nil, err
		}
	}
	select {
	case <-call.done:
		return call.img, call.err
	case <-ctx.Done():
		return nil, fmt.Errorf("native: build id %s: %w (%w)", id, ErrPending, ctx.Err())
	}
}

// Prefetch starts loading the debug file of buildID in the background,
// when it is neither loaded, nor remembered missing, nor loading, within
// the limits Resolve has (MaxPendingLoads, ctx's fetch limit). It does not
// wait: a caller with many frames prefetches the build ids of all of them
// first, so that their files load concurrently while it resolves the
// frames one by one.
func (r *Resolver) Prefetch(ctx context.Context, buildID string) {
	id := strings.ToLower(strings.ReplaceAll(buildID, "-", ""))
	if !validBuildID(id) {
		return
	}
	if img, call, err := r.known(id); img == nil && call == nil && err == nil {
		_, _ = r.startLoad(ctx, id)
	}
}

// known answers from memory: the loaded image, the remembered failure, or
// the load under way (all nil: none of them).
func (r *Resolver) known(id string) (*image, *loadCall, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if img, ok := r.cache.get(id); ok {
		return img, nil, nil
	}
	if m, ok := r.misses[id]; ok && time.Now().Before(m.until) {
		return nil, nil, m.err
	}
	return nil, r.loading[id], nil
}

// startLoad starts loading id in the background, unless MaxPendingLoads
// loads are under way or id needs a fetch beyond ctx's fetch limit.
func (r *Resolver) startLoad(ctx context.Context, id string) (*loadCall, error) {
	// Looked up before taking mu: it reads the file system.
	needsFetch := r.fetcher != nil && !r.index.hasGood(id) && !r.fetcher.has(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	if call, ok := r.loading[id]; ok {
		return call, nil
	}
	if len(r.loading) >= r.maxPending {
		return nil, fmt.Errorf("native: build id %s: %d loads under way: %w", id, len(r.loading), ErrPending)
	}
	if needsFetch && !takeFetch(ctx) {
		return nil, fmt.Errorf("native: build id %s: the batch's debuginfod fetches are spent: %w", id, ErrPending)
	}
	call := &loadCall{done: make(chan struct{})}
	r.loading[id] = call
	go r.runLoad(id, call)
	return call, nil
}

// runLoad loads id and publishes the result: the image in the cache, a
// failure remembered for missTTL unless it was Close stopping it.
func (r *Resolver) runLoad(id string, call *loadCall) {
	call.img, call.err = r.load(r.ctx, id)
	r.mu.Lock()
	delete(r.loading, id)
	switch {
	case call.err == nil && !r.cache.add(id, call.img):
		call.err = fmt.Errorf("native: debug file for %s: %d bytes parsed, %w of %d bytes", id, call.img.size, errTooLarge, r.cache.max)
		call.img = nil
		r.remember(id, call.err)
	case call.err != nil && r.ctx.Err() == nil && !isContextErr(call.err):
		r.remember(id, call.err)
	}
	r.mu.Unlock()
	close(call.done)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// remember keeps a failure for missTTL. The caller holds mu.
func (r *Resolver) remember(id string, err error) {
	if len(r.misses) >= maxMisses {
		now := time.Now()
		for k, m := range r.misses {
			if now.After(m.until) {
				delete(r.misses, k)
			}
		}
		if len(r.misses) >= maxMisses {
			r.misses = map[string]miss{}
		}
	}
	r.misses[id] = miss{err: err, until: time.Now().Add(missTTL)}
}

// load finds and parses the best file for id: a local file with DWARF or
// symbols, else a debuginfod server's, else a local stripped binary.
func (r *Resolver) load(ctx context.Context, id string) (*image, error) {
	paths, good := r.index.candidates(id)
	var errs []error
	try := func(path string) *image {
		if err := checkBuildID(path, id, r.index.maxFileBytes); err != nil {
			errs = append(errs, err)
			return nil
		}
		img, err := loadImageFileID(path, id, r.index.maxFileBytes)
		if err != nil {
			errs = append(errs, err)
		}
		return img
	}
	for i, path := range paths {
		if !good && i == 0 && r.fetcher != nil {
			break // only a stripped binary here: ask the servers first
		}
		if img := try(path); img != nil {
			return img, nil
		}
	}
	if r.fetcher != nil {
		path, err := r.fetcher.fetch(ctx, id)
		if err == nil {
			if img := try(path); img != nil {
				return img, nil
			}
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		} else {
			errs = append(errs, err)
		}
		if !good {
			for _, path := range paths {
				if img := try(path); img != nil {
					return img, nil
				}
			}
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("native: build id %s: %w", id, ErrNotFound)
	}
	return nil, fmt.Errorf("native: build id %s: %w", id, errors.Join(errs...))
}

// validBuildID accepts lower-case hex of 2 to 64 bytes (GNU build ids are
// 20 bytes of SHA-1 by default; other linkers write 8 to 32).
func validBuildID(id string) bool {
	if len(id) < 4 || len(id) > 128 || len(id)%2 != 0 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

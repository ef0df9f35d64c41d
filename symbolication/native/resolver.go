package native

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// Options configure a Resolver. The zero value resolves nothing: name the
// directories or servers to look in.
type Options struct {
	// DebugDirs are searched for debug files by build id: first the
	// `.build-id/xx/rest.debug` layout (and `.build-id/xx/rest`, the binary
	// itself), then every ELF and Mach-O file found under them (dSYM
	// bundles included), indexed by build id or UUID by a background scan
	// that runs again when a build id is in no file it saw.
	DebugDirs []string
	// RescanInterval is the least time between two scans of DebugDirs,
	// and how long a build id without a file is remembered (default one
	// minute).
	RescanInterval time.Duration
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
	// 2 minute timeout). Each request also ends with Close.
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
	defaultRescanInterval = time.Minute
	// failedLoadRetry is how long a debug file that could not be read,
	// parsed or fetched is remembered: a profile names the same broken
	// library in every sample.
	failedLoadRetry = time.Minute
	// timeoutRetry is shorter: a server that was slow may answer soon.
	timeoutRetry = 10 * time.Second
)

// ErrNotFound is returned (wrapped) when no debug file has the build id.
// It wraps symbolication.ErrNoArtifact.
var ErrNotFound = fmt.Errorf("no debug file for build id: %w", symbolication.ErrNoArtifact)

// ErrPending is returned (wrapped) when the debug file of a build id is
// being loaded or fetched and the caller's context ended first, or when
// no load could be started now (MaxPendingLoads, or the fetch limit of
// the caller's batch, see WithFetchLimit). The load goes on in the
// background; a later call finds its result. It wraps
// symbolication.ErrPending.
var ErrPending = fmt.Errorf("debug file not loaded yet: %w", symbolication.ErrPending)

// Resolver turns addresses in ELF and Mach-O images, named by build id,
// into source-level frames. It is safe for concurrent use. It finds
// files through the sources layer (sources.DebugFiles, sources.Debuginfod)
// and keeps the parsed images in a symbolication.Cache that loads them in
// the background.
type Resolver struct {
	files        *sources.DebugFiles
	fetcher      *sources.Debuginfod // nil without servers
	images       *symbolication.Cache[string, *image]
	maxFileBytes int64
	maxMemory    int64
}

// NewResolver checks the debug directories, starts their first scan and
// prepares the debuginfod cache. It makes no network request.
func NewResolver(opts Options) (*Resolver, error) {
	opts = withDefaults(opts)
	files, err := sources.NewDebugFiles(sources.DebugFilesOptions{
		Dirs: opts.DebugDirs, MaxFileBytes: opts.MaxFileBytes, RescanInterval: opts.RescanInterval, Inspect: inspectImages,
	})
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	fetcher, err := newFetcher(opts)
	if err != nil {
		files.Close()
		return nil, fmt.Errorf("native: %w", err)
	}
	r := &Resolver{files: files, fetcher: fetcher, maxFileBytes: opts.MaxFileBytes, maxMemory: opts.MaxMemoryBytes}
	r.images = symbolication.NewCache(symbolication.CacheOptions{
		MaxBytes:   opts.MaxMemoryBytes,
		Background: true,
		MaxLoads:   opts.MaxPendingLoads,
		Retry: symbolication.RetryAfter{
			NotFound: opts.RescanInterval, Malformed: failedLoadRetry, Timeout: timeoutRetry, Fetch: failedLoadRetry,
		},
	}, r.load)
	return r, nil
}

func withDefaults(opts Options) Options {
	opts.MaxMemoryBytes = orDefault(opts.MaxMemoryBytes, defaultMaxMemoryBytes)
	opts.MaxCacheBytes = orDefault(opts.MaxCacheBytes, defaultMaxCacheBytes)
	opts.MaxConcurrentFetches = orDefault(opts.MaxConcurrentFetches, defaultFetches)
	opts.MaxPendingLoads = orDefault(opts.MaxPendingLoads, defaultPendingLoads)
	opts.RescanInterval = orDefault(opts.RescanInterval, defaultRescanInterval)
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: defaultHTTPTimeout}
	}
	return opts
}

// orDefault is v, or d when v is not positive.
func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// newFetcher makes the debuginfod client; nil without servers.
func newFetcher(opts Options) (*sources.Debuginfod, error) {
	if len(opts.DebuginfodURLs) == 0 {
		return nil, nil
	}
	for _, s := range opts.DebuginfodURLs {
		if !isServerURL(s) {
			return nil, fmt.Errorf("debuginfod URL %q: want http(s)://host[/path]", s)
		}
	}
	if opts.CacheDir == "" {
		return nil, errors.New("debuginfod URLs need a CacheDir")
	}
	return sources.NewDebuginfod(sources.DebuginfodOptions{
		Servers: opts.DebuginfodURLs, Client: opts.HTTPClient, Dir: opts.CacheDir,
		MaxBytes: opts.MaxCacheBytes, MaxFileBytes: opts.MaxFileBytes, InFlight: opts.MaxConcurrentFetches,
		Verify: func(path, id string) error { return checkBuildID(path, id, 0) },
	})
}

// isServerURL accepts http(s)://host[/path].
func isServerURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Resolve maps in.Frame.Address in the binary in.BuildID loaded at
// in.ImageAddr to its functions, innermost (inlined) first: the
// symbolication.Resolver of native frames. Its errors wrap the
// symbolication sentinels (ErrNoArtifact, ErrNoMatch, ErrPending, …).
func (r *Resolver) Resolve(ctx context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	frames, err := r.ResolveAbsolute(ctx, in.BuildID, in.Frame.Address, in.ImageAddr)
	switch {
	case err != nil:
		return nil, err
	case len(frames) == 0 || frames[0].Function == "":
		return nil, fmt.Errorf("address %#x in build id %s: %w", in.Frame.Address, in.BuildID, symbolication.ErrNoMatch)
	}
	return symbolicationFrames(frames), nil
}

// symbolicationFrames are native frames as every kind answers them.
func symbolicationFrames(frames []Frame) []symbolication.Frame {
	out := make([]symbolication.Frame, len(frames))
	for i, f := range frames {
		out[i] = symbolication.Frame{Function: f.Function, File: f.File, Line: f.Line, Inlined: f.Inlined}
	}
	return out
}

// ResolveAddress returns the frames at addr in the image named buildID,
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
func (r *Resolver) ResolveAddress(ctx context.Context, buildID string, addr uint64) ([]Frame, error) {
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
		return nil, fmt.Errorf("native: instruction address %#x below image address %#x: %w", instructionAddr, imageAddr, symbolication.ErrNoMatch)
	}
	img, err := r.image(ctx, buildID)
	if err != nil {
		return nil, err
	}
	return img.resolve(instructionAddr - imageAddr + img.imageVMA), nil
}

// Close stops the scans, loads and fetches under way and drops what the
// Resolver holds in memory. The debuginfod cache directory keeps its
// files for the next Resolver.
func (r *Resolver) Close() error {
	r.images.Close()
	r.files.Close()
	return nil
}

// CacheStats reports the cache of parsed debug files.
func (r *Resolver) CacheStats() symbolication.CacheStats { return r.images.Stats() }

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
	id, err := normalBuildID(buildID)
	if err != nil {
		return nil, err
	}
	if err := r.admit(ctx, id); err != nil {
		return nil, err
	}
	img, err := r.images.Get(ctx, id)
	return img, pendingError(id, err)
}

// pendingError marks the cache's "not ready yet" as this package's
// ErrPending; other errors pass as they are.
func pendingError(id string, err error) error {
	if errors.Is(err, symbolication.ErrPending) && !errors.Is(err, ErrPending) {
		return fmt.Errorf("native: build id %s: %w: %w", id, ErrPending, err)
	}
	return err
}

// Prefetch starts loading the debug file of buildID in the background,
// when it is neither loaded, nor remembered missing, nor loading, within
// the limits Resolve has (MaxPendingLoads, ctx's fetch limit). It does not
// wait: a caller with many frames prefetches the build ids of all of them
// first, so that their files load concurrently while it resolves the
// frames one by one.
func (r *Resolver) Prefetch(ctx context.Context, buildID string) {
	id, err := normalBuildID(buildID)
	if err != nil || r.admit(ctx, id) != nil {
		return
	}
	r.images.Prefetch(id)
}

// PrefetchLookup is Prefetch for the build id of a lookup: the processor
// prefetches a batch's native frames with it.
func (r *Resolver) PrefetchLookup(ctx context.Context, in symbolication.Lookup) {
	r.Prefetch(ctx, in.BuildID)
}

// admit refuses a load that would need a debuginfod fetch beyond ctx's
// fetch limit; a build id held or loading already costs nothing.
func (r *Resolver) admit(ctx context.Context, id string) error {
	if r.needsFetch(id) && !takeFetch(ctx) {
		return fmt.Errorf("native: build id %s: the batch's debuginfod fetches are spent: %w", id, ErrPending)
	}
	return nil
}

// needsFetch reports whether loading id would ask a debuginfod server: it
// is neither held nor loading, and no local file serves it well.
func (r *Resolver) needsFetch(id string) bool {
	return r.fetcher != nil && !r.images.Holds(id) && !r.files.HasGood(id) && !r.fetcher.Has(id)
}

// normalBuildID is a build id in lower-case hex without hyphens.
func normalBuildID(buildID string) (string, error) {
	id := strings.ToLower(strings.ReplaceAll(buildID, "-", ""))
	if !sources.ValidBuildID(id) {
		return "", fmt.Errorf("native: build id %q: want 2 to 64 hex bytes: %w", buildID, symbolication.ErrNoArtifact)
	}
	return id, nil
}

// load finds and parses the best file for id, within the memory bound.
func (r *Resolver) load(ctx context.Context, id string) (*image, int64, error) {
	img, err := r.find(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if img.size > r.maxMemory {
		return nil, 0, fmt.Errorf("native: debug file for %s: %d bytes parsed, %w of %d bytes: %w",
			id, img.size, sources.ErrLargerThanCache, r.maxMemory, symbolication.ErrFetch)
	}
	return img, img.size, nil
}

// find loads the best file for id: a local file with DWARF or symbols,
// else a debuginfod server's, else a local stripped binary.
func (r *Resolver) find(ctx context.Context, id string) (*image, error) {
	paths, good, err := r.files.Candidates(ctx, id)
	if err != nil {
		return nil, err
	}
	a := &attempts{id: id, maxBytes: r.maxFileBytes}
	for _, from := range r.order(good) {
		var img *image
		if from == fromServers {
			img, err = r.fromServers(ctx, a)
		} else {
			img = a.first(paths)
		}
		if img != nil || err != nil {
			return img, err
		}
	}
	return nil, a.failure()
}

// origin is where a debug file comes from.
type origin int

const (
	fromLocal origin = iota
	fromServers
)

// order is where to look, in order: the local files first when one has
// more than exported symbols or there is no server; else the servers
// first, a local stripped binary being the last resort.
func (r *Resolver) order(goodLocal bool) []origin {
	switch {
	case r.fetcher == nil:
		return []origin{fromLocal}
	case goodLocal:
		return []origin{fromLocal, fromServers}
	}
	return []origin{fromServers, fromLocal}
}

// fromServers loads the file a debuginfod server has for a.id; nil and
// no error when none could be used (the failure is in a).
func (r *Resolver) fromServers(ctx context.Context, a *attempts) (*image, error) {
	path, err := r.fetcher.Fetch(ctx, a.id)
	switch {
	case err == nil:
		return a.first([]string{path}), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !errors.Is(err, symbolication.ErrNoArtifact):
		a.errs = append(a.errs, err)
	}
	return nil, nil
}

// attempts are the files tried for one build id and why each failed.
type attempts struct {
	id       string
	maxBytes int64
	errs     []error
}

// first loads the first of paths that is a debug file of a.id.
func (a *attempts) first(paths []string) *image {
	for _, path := range paths {
		if img := a.try(path); img != nil {
			return img
		}
	}
	return nil
}

func (a *attempts) try(path string) *image {
	if err := checkBuildID(path, a.id, a.maxBytes); err != nil {
		a.errs = append(a.errs, fileError(err))
		return nil
	}
	img, err := loadImageFileID(path, a.id, a.maxBytes)
	if err != nil {
		a.errs = append(a.errs, fileError(err))
	}
	return img
}

// fileError says why a file could not serve: it could not be read (a
// fetch error), or it was read and is not a debug file of the build id
// (malformed).
func fileError(err error) error {
	if errors.Is(err, sources.ErrTooLarge) || errors.Is(err, sources.ErrNotRegular) ||
		errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %w", symbolication.ErrFetch, err)
	}
	return fmt.Errorf("%w: %w", symbolication.ErrMalformed, err)
}

// failure is the error of a build id no file served.
func (a *attempts) failure() error {
	if len(a.errs) == 0 {
		return fmt.Errorf("native: build id %s: %w", a.id, ErrNotFound)
	}
	return fmt.Errorf("native: build id %s: %w", a.id, errors.Join(a.errs...))
}

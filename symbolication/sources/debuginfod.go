package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// CacheSuffix names the files the debuginfod client keeps in its cache
// directory.
const CacheSuffix = ".debuginfo"

// Debuginfod fetches debug files by build id from debuginfod servers
// (`GET <server>/buildid/<id>/debuginfo`) into a directory whose total
// size stays within a byte bound, evicting the least recently used files.
type Debuginfod struct {
	servers []string
	client  *http.Client
	dir     string
	max     int64
	// maxFile bounds one download (the cache bound, or less).
	maxFile int64
	// slots holds a token per request in flight: at most cap(slots).
	slots chan struct{}
	// verify checks that a downloaded file is a debug file of the build
	// id asked for (the kind's parser knows how).
	verify func(path, id string) error

	mu    sync.Mutex
	files map[string]cachedFile // by build id
	used  int64
}

type cachedFile struct {
	size     int64
	lastUsed time.Time
}

// ErrLargerThanCache: a debug file does not fit the cache bound.
var ErrLargerThanCache = errors.New("larger than the cache")

// DebuginfodOptions configure a Debuginfod client.
type DebuginfodOptions struct {
	// Servers are asked in order.
	Servers []string
	// Client makes the requests; each also ends with the fetch's context.
	Client *http.Client
	// Dir keeps the fetched files; the client owns its `*.debuginfo`
	// files.
	Dir string
	// MaxBytes bounds Dir's files; MaxFileBytes one file (0: MaxBytes).
	MaxBytes, MaxFileBytes int64
	// InFlight bounds the requests under way.
	InFlight int
	// Verify checks a downloaded file before it is kept.
	Verify func(path, id string) error
}

// NewDebuginfod takes over opts.Dir: the files it left there before count
// against the bound (and are evicted first when over it), stray temporary
// files are removed.
func NewDebuginfod(opts DebuginfodOptions) (*Debuginfod, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("debuginfod cache: %w", err)
	}
	maxFile := opts.MaxBytes
	if opts.MaxFileBytes > 0 {
		maxFile = min(maxFile, opts.MaxFileBytes)
	}
	c := &Debuginfod{servers: opts.Servers, client: opts.Client, dir: opts.Dir, max: opts.MaxBytes, maxFile: maxFile,
		slots: make(chan struct{}, max(opts.InFlight, 1)), verify: opts.Verify, files: map[string]cachedFile{}}
	entries, err := os.ReadDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("debuginfod cache: %w", err)
	}
	for _, e := range entries {
		c.adopt(e)
	}
	c.mu.Lock()
	c.evict(0)
	c.mu.Unlock()
	return c, nil
}

// adopt counts a file an earlier client left in the directory, or removes
// a download it did not finish.
func (c *Debuginfod) adopt(e os.DirEntry) {
	name := e.Name()
	info, err := e.Info()
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	id, isCached := strings.CutSuffix(name, CacheSuffix)
	switch {
	case strings.HasPrefix(name, ".fetch-"):
		_ = os.Remove(filepath.Join(c.dir, name))
	case isCached && ValidBuildID(id):
		c.files[id] = cachedFile{size: info.Size(), lastUsed: info.ModTime()}
		c.used += info.Size()
	}
}

func (c *Debuginfod) path(id string) string { return filepath.Join(c.dir, id+CacheSuffix) }

// CachedBytes reports the bytes the cache directory holds.
func (c *Debuginfod) CachedBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Has reports whether the cache holds the file of id.
func (c *Debuginfod) Has(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.files[id]
	return ok
}

// Fetch returns the path of the debug file for id, from the cache or the
// first server that has it. The error wraps symbolication.ErrNoArtifact
// when no server has it, ErrTimeout when a server took too long, ErrFetch
// for any other failure, and ctx's error when ctx ended.
func (c *Debuginfod) Fetch(ctx context.Context, id string) (string, error) {
	if path, ok := c.cached(id); ok {
		return path, nil
	}
	var errs []error
	for _, server := range c.servers {
		path, err := c.download(ctx, server, id)
		switch {
		case err == nil:
			return path, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case !errors.Is(err, errNotOnServer):
			errs = append(errs, err)
		}
	}
	return "", notFetched(id, errs)
}

// notFetched is the error of a build id no server served: the servers'
// failures, or not found when each answered 404.
func notFetched(id string, errs []error) error {
	if len(errs) > 0 {
		return fmt.Errorf("debuginfod: %w", errors.Join(errs...))
	}
	return fmt.Errorf("debuginfod: no server has build id %s: %w", id, symbolication.ErrNoArtifact)
}

// cached returns the cache directory's file of id, marked as used now.
func (c *Debuginfod) cached(id string) (string, bool) {
	c.mu.Lock()
	f, ok := c.files[id]
	if ok {
		f.lastUsed = time.Now()
		c.files[id] = f
	}
	c.mu.Unlock()
	if ok {
		_ = os.Chtimes(c.path(id), f.lastUsed, f.lastUsed) // keeps the order across restarts
	}
	return c.path(id), ok
}

// errNotOnServer: one server answered 404.
var errNotOnServer = errors.New("not on this server")

// download fetches one server's file into a temporary file, checks that
// it is a debug file of the asked build id, and moves it into the cache.
// It waits for a free slot first: at most cap(slots) requests are in
// flight.
func (c *Debuginfod) download(ctx context.Context, server, id string) (string, error) {
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	u := strings.TrimRight(server, "/") + "/buildid/" + url.PathEscape(id) + "/debuginfo"
	resp, err := c.get(ctx, u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	tmp, n, err := c.receive(u, resp.Body)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp) // a no-op once renamed
	if err := c.verify(tmp, id); err != nil {
		return "", fmt.Errorf("%s: %w: %w", u, symbolication.ErrMalformed, err)
	}
	return c.store(tmp, id, n)
}

// get asks one server; an answer other than 200 is an error, 404 one
// wrapping errNotOnServer.
func (c *Debuginfod) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", u, symbolication.ErrFetch, err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, fetchError(err))
	}
	if err := c.checkResponse(u, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// fetchError classifies a request's failure: a timeout of the client
// (not of the caller's context) wraps ErrTimeout, any other ErrFetch.
func fetchError(err error) error {
	if symbolication.FailureOf(err) == symbolication.FailureTimeout {
		return fmt.Errorf("%w: %w", symbolication.ErrTimeout, err)
	}
	return fmt.Errorf("%w: %w", symbolication.ErrFetch, err)
}

func (c *Debuginfod) checkResponse(u string, resp *http.Response) error {
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return errNotOnServer
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: %w: %s", u, symbolication.ErrFetch, resp.Status)
	case resp.ContentLength > c.maxFile:
		return fmt.Errorf("%s: %w: %d bytes: %w of %d bytes", u, symbolication.ErrFetch, resp.ContentLength, ErrLargerThanCache, c.maxFile)
	}
	return nil
}

// receive copies a body of at most maxFile bytes into a temporary file of
// the cache directory and returns its path and size.
func (c *Debuginfod) receive(u string, body io.Reader) (string, int64, error) {
	tmp, err := os.CreateTemp(c.dir, ".fetch-")
	if err != nil {
		return "", 0, fmt.Errorf("debuginfod cache: %w", err)
	}
	n, err := io.Copy(tmp, io.LimitReader(body, c.maxFile+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		err = fmt.Errorf("%s: %w", u, fetchError(err))
	case n > c.maxFile:
		err = fmt.Errorf("%s: %w: %w of %d bytes", u, symbolication.ErrFetch, ErrLargerThanCache, c.maxFile)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", 0, err
	}
	return tmp.Name(), n, nil
}

// store moves a checked download into the cache, evicting older files to
// keep the total within the bound.
func (c *Debuginfod) store(tmp, id string, size int64) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.files[id]; ok { // fetched concurrently
		c.used -= old.size
		delete(c.files, id)
	}
	c.evict(size)
	if err := os.Rename(tmp, c.path(id)); err != nil {
		return "", fmt.Errorf("debuginfod cache: %w", err)
	}
	c.files[id] = cachedFile{size: size, lastUsed: time.Now()}
	c.used += size
	return c.path(id), nil
}

// evict removes least recently used files until incoming more bytes fit.
// The caller holds mu.
func (c *Debuginfod) evict(incoming int64) {
	if c.used+incoming <= c.max {
		return
	}
	ids := make([]string, 0, len(c.files))
	for id := range c.files {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return c.files[a].lastUsed.Compare(c.files[b].lastUsed) })
	for _, id := range ids {
		if c.used+incoming <= c.max {
			return
		}
		_ = os.Remove(c.path(id))
		c.used -= c.files[id].size
		delete(c.files, id)
	}
}

// ValidBuildID accepts lower-case hex of 2 to 64 bytes (GNU build ids are
// 20 bytes of SHA-1 by default; other linkers write 8 to 32; a Mach-O
// UUID is 16).
func ValidBuildID(id string) bool {
	return len(id) >= 4 && len(id) <= 128 && len(id)%2 == 0 && strings.IndexFunc(id, notLowerHex) < 0
}

func notLowerHex(c rune) bool { return (c < '0' || c > '9') && (c < 'a' || c > 'f') }

package native

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
)

// cacheSuffix names the files the debuginfod client keeps in CacheDir.
const cacheSuffix = ".debuginfo"

// debuginfod fetches debug files by build id from debuginfod servers
// (`GET <server>/buildid/<id>/debuginfo`) into a directory whose total
// size stays within a byte bound, evicting the least recently used files.
type debuginfod struct {
	servers []string
	client  *http.Client
	dir     string
	max     int64
	// maxFile bounds one download (the cache bound, or less).
	maxFile int64
	// slots holds a token per request in flight: at most cap(slots).
	slots chan struct{}

	mu    sync.Mutex
	files map[string]cachedFile // by build id
	used  int64
}

type cachedFile struct {
	size     int64
	lastUsed time.Time
}

// errTooLarge: a debug file does not fit the cache bound.
var errTooLarge = errors.New("larger than the cache")

// newDebuginfod takes over dir: the files it left there before count
// against the bound (and are evicted first when over it), stray temporary
// files are removed.
func newDebuginfod(servers []string, client *http.Client, dir string, maxBytes, maxFileBytes int64, inFlight int) (*debuginfod, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("debuginfod cache: %w", err)
	}
	maxFile := maxBytes
	if maxFileBytes > 0 {
		maxFile = min(maxFile, maxFileBytes)
	}
	c := &debuginfod{servers: servers, client: client, dir: dir, max: maxBytes, maxFile: maxFile,
		slots: make(chan struct{}, max(inFlight, 1)), files: map[string]cachedFile{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("debuginfod cache: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		switch {
		case strings.HasPrefix(name, ".fetch-"):
			_ = os.Remove(filepath.Join(dir, name))
		case strings.HasSuffix(name, cacheSuffix) && validBuildID(strings.TrimSuffix(name, cacheSuffix)):
			c.files[strings.TrimSuffix(name, cacheSuffix)] = cachedFile{size: info.Size(), lastUsed: info.ModTime()}
			c.used += info.Size()
		}
	}
	c.mu.Lock()
	c.evict(0)
	c.mu.Unlock()
	return c, nil
}

func (c *debuginfod) path(id string) string { return filepath.Join(c.dir, id+cacheSuffix) }

// has reports whether the cache holds the file of id.
func (c *debuginfod) has(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.files[id]
	return ok
}

// fetch returns the path of the debug file for id, from the cache or the
// first server that has it. ErrNotFound when no server has it.
func (c *debuginfod) fetch(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	if f, ok := c.files[id]; ok {
		f.lastUsed = time.Now()
		c.files[id] = f
		c.mu.Unlock()
		_ = os.Chtimes(c.path(id), f.lastUsed, f.lastUsed) // keeps the order across restarts
		return c.path(id), nil
	}
	c.mu.Unlock()

	var errs []error
	for _, server := range c.servers {
		path, err := c.download(ctx, server, id)
		if err == nil {
			return path, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("debuginfod: %w", errors.Join(errs...))
	}
	return "", fmt.Errorf("debuginfod: %w", ErrNotFound)
}

// download fetches one server's file into a temporary file, checks that
// it is an ELF file with the asked build id, and moves it into the cache.
// It waits for a free slot first: at most cap(slots) requests are in
// flight.
func (c *debuginfod) download(ctx context.Context, server, id string) (string, error) {
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	u := strings.TrimRight(server, "/") + "/buildid/" + url.PathEscape(id) + "/debuginfo"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return "", ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("%s: %s", u, resp.Status)
	case resp.ContentLength > c.maxFile:
		return "", fmt.Errorf("%s: %d bytes: %w of %d bytes", u, resp.ContentLength, errTooLarge, c.maxFile)
	}
	tmp, err := os.CreateTemp(c.dir, ".fetch-")
	if err != nil {
		return "", fmt.Errorf("debuginfod cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, c.maxFile+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %w", u, err)
	case n > c.maxFile:
		return "", fmt.Errorf("%s: %w of %d bytes", u, errTooLarge, c.maxFile)
	}
	if err := checkBuildID(tmp.Name(), id, 0); err != nil {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	return c.store(tmp.Name(), id, n)
}

// store moves a checked download into the cache, evicting older files to
// keep the total within the bound.
func (c *debuginfod) store(tmp, id string, size int64) (string, error) {
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
func (c *debuginfod) evict(incoming int64) {
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

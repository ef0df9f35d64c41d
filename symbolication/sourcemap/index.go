package sourcemap

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// maxIndexedFiles bounds one scan of the directories: a directory
// configured by mistake (a whole file system) must not grow the index
// without bound. The files past it are left out and the scan says so.
const maxIndexedFiles = 200_000

// dirIndex is what one scan of the directories found: every regular file
// (symbolic links followed while they stay within the directories), by
// its slash path relative to its directory, and the debug ids of the maps
// and bundles among them.
type dirIndex struct {
	files    map[string]indexedFile
	debugIDs map[string]mapSource
	// truncated: the scan stopped at maxIndexedFiles.
	truncated bool
}

// indexedFile is one file of a scan.
type indexedFile struct {
	// root is the index of the configured directory holding the file; an
	// earlier directory wins over a later one.
	root int
	// real is the file's real path, the one read; it is within the
	// configured directories.
	real string
	// bundle is set for a bundle (.js, .mjs, .cjs) whose map is known:
	// beside it through its sourceMappingURL, or inline.
	bundle *mapSource
}

// fileInfo is what a scan reads of a map or bundle: its debug id and, for
// a bundle, its sourceMappingURL. It is kept between scans for files whose
// size and modification time did not change, so that a rescan reads only
// new or changed files.
type fileInfo struct {
	debugID          string
	sourceMappingURL string
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	real  string
	size  int64
	mtime time.Time
}

// scanner keeps the current index of the directories and makes new ones,
// one scan at a time, in the background: a caller waits for a scan only as
// long as its context allows, and Close stops a scan under way.
type scanner struct {
	dirs     []string
	roots    symbolication.Roots
	maxBytes int64
	rescan   time.Duration

	ctx    context.Context // ends with Close
	cancel context.CancelFunc

	mu      sync.Mutex
	current *dirIndex // nil until the first scan ends
	started time.Time // start of the scan that made current
	running chan struct{}
	infos   map[fileStamp]fileInfo // what the last scan read
}

func newScanner(dirs []string, maxBytes int64, rescan time.Duration) (*scanner, error) {
	roots, err := symbolication.NewRoots(dirs)
	if err != nil {
		return nil, fmt.Errorf("source map directories: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &scanner{dirs: dirs, roots: roots, maxBytes: maxBytes, rescan: rescan, ctx: ctx, cancel: cancel, infos: map[fileStamp]fileInfo{}}, nil
}

// close stops a scan under way and any later one.
func (s *scanner) close() { s.cancel() }

// index returns the current index. Before the first scan has ended, and
// when fresh is asked and the current index is older than the rescan
// interval, it starts a scan (unless one runs) and waits for it while ctx
// allows; then it returns the index it has, or an error wrapping
// symbolication.ErrPending when it has none yet.
func (s *scanner) index(ctx context.Context, fresh bool) (*dirIndex, error) {
	s.mu.Lock()
	cur := s.current
	if cur != nil && (!fresh || time.Since(s.started) < s.rescan) {
		s.mu.Unlock()
		return cur, nil
	}
	running := s.startLocked()
	s.mu.Unlock()
	select {
	case <-running:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.current == nil {
			return nil, fmt.Errorf("source map directories: scan stopped: %w", symbolication.ErrPending)
		}
		return s.current, nil
	case <-ctx.Done():
		if cur != nil {
			return cur, nil
		}
		return nil, fmt.Errorf("source map directories: first scan not done: %w (%w)", symbolication.ErrPending, ctx.Err())
	}
}

// start starts a scan unless one runs.
func (s *scanner) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
}

// startLocked starts a scan unless one runs, and returns the channel
// closed when the running scan ends; s.mu is held.
func (s *scanner) startLocked() chan struct{} {
	if s.running == nil {
		s.running = make(chan struct{})
		go s.scan(s.running)
	}
	return s.running
}

// scan makes a new index and closes done.
func (s *scanner) scan(done chan struct{}) {
	start := time.Now()
	s.mu.Lock()
	prev := s.infos
	s.mu.Unlock()
	idx, infos := s.build(prev)
	s.mu.Lock()
	if s.ctx.Err() == nil {
		s.current, s.started, s.infos = idx, start, infos
	}
	s.running = nil
	s.mu.Unlock()
	close(done)
}

// build walks the directories. prev is what an earlier scan read; the
// result's infos hold what this one saw, for the next.
func (s *scanner) build(prev map[fileStamp]fileInfo) (*dirIndex, map[fileStamp]fileInfo) {
	w := &walk{s: s, prev: prev, infos: map[fileStamp]fileInfo{}, idx: &dirIndex{files: map[string]indexedFile{}, debugIDs: map[string]mapSource{}}}
	for i, dir := range s.dirs {
		real, err := s.roots.Resolve(dir)
		if err != nil {
			continue // the directory went away since the start
		}
		w.root = i
		w.dir(real, "", map[string]bool{real: true})
	}
	w.resolveBundles()
	return w.idx, w.infos
}

// walk is one scan under way.
type walk struct {
	s           *scanner
	root        int
	prev, infos map[fileStamp]fileInfo
	idx         *dirIndex
	n           int
	// bundles are what was read of the bundles: their maps are known
	// once every file is.
	bundles []bundleFile
}

type bundleFile struct {
	rel  string
	info fileInfo
}

// dir indexes the directory at real path dir, whose files are named rel/…
// in the index. chain holds the real directories from the root down to
// dir: a link back to one of them would loop.
func (w *walk) dir(dir, rel string, chain map[string]bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // an unreadable directory is skipped
	}
	for _, e := range entries {
		if w.s.ctx.Err() != nil || w.idx.truncated {
			return
		}
		p, name := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
		typ := e.Type()
		if typ&os.ModeSymlink != 0 {
			real, err := w.s.roots.Resolve(p)
			if err != nil {
				continue // dangling, or leading out of the directories
			}
			st, err := os.Stat(real)
			if err != nil {
				continue
			}
			p, typ = real, st.Mode().Type()
		}
		switch {
		case typ.IsDir() && !chain[p]:
			chain[p] = true
			w.dir(p, name, chain)
			delete(chain, p)
		case typ.IsRegular():
			w.file(p, name)
		}
		// Anything else (a FIFO, a socket, a device) is never opened.
	}
}

// file indexes one regular file.
func (w *walk) file(real, rel string) {
	if w.n++; w.n > maxIndexedFiles {
		w.idx.truncated = true
		return
	}
	_, shadowed := w.idx.files[rel]
	if !shadowed {
		w.idx.files[rel] = indexedFile{root: w.root, real: real}
	}
	ext := strings.ToLower(path.Ext(rel))
	if ext != ".map" && !isBundleExt(ext) {
		return
	}
	info, ok := w.info(real)
	if !ok {
		return
	}
	switch {
	case ext == ".map" && info.debugID != "":
		if _, dup := w.idx.debugIDs[info.debugID]; !dup {
			w.idx.debugIDs[info.debugID] = mapSource{path: real, rel: rel}
		}
	case isBundleExt(ext) && !shadowed:
		// A bundle under the same path in an earlier directory hides
		// this one: its sourceMappingURL is relative to its own.
		w.bundles = append(w.bundles, bundleFile{rel: rel, info: info})
	}
}

func isBundleExt(ext string) bool { return ext == ".js" || ext == ".mjs" || ext == ".cjs" }

// info reads a map's or bundle's debug id and sourceMappingURL, or takes
// them from the previous scan when the file did not change.
func (w *walk) info(real string) (fileInfo, bool) {
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return fileInfo{}, false
	}
	stamp := fileStamp{real: real, size: st.Size(), mtime: st.ModTime()}
	info, ok := w.prev[stamp]
	if !ok {
		b, err := symbolication.ReadRegular(real, w.s.maxBytes)
		if err != nil {
			return fileInfo{}, false
		}
		info = infoOf(filepath.Ext(real), b)
	}
	w.infos[stamp] = info
	return info, true
}

// infoOf reads the debug id of a map, or the debug id and last
// sourceMappingURL of a bundle.
func infoOf(ext string, b []byte) fileInfo {
	var info fileInfo
	if strings.EqualFold(ext, ".map") {
		if m := mapDebugID.FindSubmatch(b); m != nil {
			info.debugID = strings.ToLower(string(m[1]))
		}
		return info
	}
	if m := bundleDebugID.FindSubmatch(b); m != nil {
		info.debugID = strings.ToLower(string(m[1]))
	}
	info.sourceMappingURL = lastSourceMappingURL(b)
	if strings.HasPrefix(info.sourceMappingURL, "data:") {
		// The whole URL is read again when the map is loaded.
		info.sourceMappingURL = "data:"
	}
	return info
}

// resolveBundles follows each bundle's sourceMappingURL to its map, now
// that every file is known, and adds the debug ids of bundles; a map's
// own debug id wins over an inline map's.
func (w *walk) resolveBundles() {
	for _, b := range w.bundles {
		f := w.idx.files[b.rel]
		src, err := w.idx.mapOfBundle(b.rel, f, b.info.sourceMappingURL)
		if err != nil {
			continue
		}
		f.bundle = &src
		w.idx.files[b.rel] = f
		if b.info.debugID == "" {
			continue
		}
		if cur, dup := w.idx.debugIDs[b.info.debugID]; !dup || cur.inline && !src.inline {
			w.idx.debugIDs[b.info.debugID] = src
		}
	}
}

// mapOfBundle follows a bundle's sourceMappingURL (ref) to its map: a file
// of the index (relative URLs only: no network, never outside the
// bundle's directory root) or an inline data: URL.
func (idx *dirIndex) mapOfBundle(rel string, f indexedFile, ref string) (mapSource, error) {
	switch {
	case ref == "":
		return mapSource{}, fmt.Errorf("%s: no sourceMappingURL comment: %w", rel, errNotFound)
	case ref == "data:":
		return mapSource{path: f.real, rel: rel, inline: true}, nil
	case strings.Contains(ref, "://") || strings.HasPrefix(ref, "/"):
		return mapSource{}, fmt.Errorf("%s: sourceMappingURL %q is not relative to the bundle: %w", rel, ref, errNotFound)
	}
	target, err := relativeTarget(rel, ref)
	if err != nil {
		return mapSource{}, err
	}
	m, ok := idx.files[target]
	if !ok || m.root != f.root {
		return mapSource{}, fmt.Errorf("%s: sourceMappingURL %q: no such file in its directory: %w", rel, ref, errNotFound)
	}
	return mapSource{path: m.real, rel: target}, nil
}

// relativeTarget is the index path a bundle's relative sourceMappingURL
// names; an error when it climbs out of the bundle's directory root.
func relativeTarget(rel, ref string) (string, error) {
	unescaped, err := url.PathUnescape(strings.SplitN(ref, "?", 2)[0])
	if err != nil {
		return "", fmt.Errorf("%s: sourceMappingURL %q: %w", rel, ref, err)
	}
	target := path.Join(path.Dir(rel), unescaped)
	if target == ".." || strings.HasPrefix(target, "../") || path.IsAbs(target) {
		return "", fmt.Errorf("%s: sourceMappingURL %q leads outside its directory: %w", rel, ref, errNotFound)
	}
	return target, nil
}

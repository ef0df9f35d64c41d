package sources

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// maxIndexedFiles bounds one scan of the directories: a directory
// configured by mistake (a whole file system) must not grow the index
// without bound. The files past it are left out and the scan says so.
const maxIndexedFiles = 200_000

// mapIndex is what one scan of the directories found: every regular file
// (symbolic links followed while they stay within the directories), by
// its slash path relative to its directory, and the debug ids of the maps
// and bundles among them.
type mapIndex struct {
	files    map[string]indexedMapFile
	debugIDs map[string]MapSource
	// truncated: the scan stopped at maxIndexedFiles.
	truncated bool
}

// indexedMapFile is one file of a scan.
type indexedMapFile struct {
	// root is the index of the configured directory holding the file; an
	// earlier directory wins over a later one.
	root int
	// real is the file's real path, the one read; it is within the
	// configured directories.
	real string
	// bundle is set for a bundle (.js, .mjs, .cjs) whose map is known:
	// beside it through its sourceMappingURL, or inline.
	bundle *MapSource
}

// mapFileInfo is what a scan reads of a map or bundle: its debug id and, for
// a bundle, its sourceMappingURL. It is kept between scans for files whose
// size and modification time did not change, so that a rescan reads only
// new or changed files.
type mapFileInfo struct {
	debugID          string
	sourceMappingURL string
}

// mapFileStamp identifies one version of a file.
type mapFileStamp struct {
	real  string
	size  int64
	mtime time.Time
}

// SourceMaps finds the source maps of JavaScript bundles in directories:
// by the debug id of a map or bundle, or by a bundle's URL laid out as a
// path (<dir>/<path>.map, or a local copy <dir>/<path> whose
// sourceMappingURL names its map). The directories are indexed by
// background scans (Scans), scanned again on a miss at most once per
// rescan interval (Find); a scan keeps what it read of each file for the
// next, so that a rescan reads only new or changed files.
type SourceMaps struct {
	dirs     []string
	roots    Roots
	maxBytes int64
	scans    *Scans[*mapIndex]
	// infos is what the last scan read; only a scan (one at a time)
	// reads and writes it.
	infos map[mapFileStamp]mapFileInfo
}

// NewSourceMaps checks the directories and starts their first scan, without
// waiting for it; maxBytes bounds a file read.
func NewSourceMaps(dirs []string, maxBytes int64, rescan time.Duration) (*SourceMaps, error) {
	if err := CheckDirectories("source map", dirs); err != nil {
		return nil, err
	}
	roots, err := NewRoots(dirs)
	if err != nil {
		return nil, fmt.Errorf("source map directories: %w", err)
	}
	s := &SourceMaps{dirs: dirs, roots: roots, maxBytes: maxBytes, infos: map[mapFileStamp]mapFileInfo{}}
	s.scans = NewScans("source map directories", rescan, s.build)
	s.scans.Start()
	return s, nil
}

// Close stops a scan under way; no scan starts afterwards.
func (s *SourceMaps) Close() { s.scans.Close() }

// Locate finds the map of a frame: by debug id first, when the frame has
// one, then by its file (a URL or path). A frame that neither finds makes
// the directories be scanned again when the last scan is older than the
// rescan interval. The error wraps symbolication.ErrNoArtifact when no map
// fits, ErrPending when the first scan did not end while ctx allowed.
func (s *SourceMaps) Locate(ctx context.Context, debugID, file string) (MapSource, error) {
	var lastErr error
	src, ok, err := Find(ctx, s.scans, func(idx *mapIndex) (MapSource, bool) {
		src, err := idx.find(debugID, file)
		lastErr = err
		return src, err == nil
	})
	switch {
	case err != nil:
		return MapSource{}, err
	case ok:
		return src, nil
	}
	return MapSource{}, fmt.Errorf("source map of %s (debug id %q): %w: %w", file, debugID, symbolication.ErrNoArtifact, lastErr)
}

// find looks a frame up in one index.
func (idx *mapIndex) find(debugID, file string) (MapSource, error) {
	if id := strings.ToLower(debugID); id != "" {
		if src, ok := idx.debugIDs[id]; ok {
			return src, nil
		}
	}
	return idx.byPath(file)
}

// ReadMap reads the bytes of a located map (a file, or a bundle's inline
// data: URL), at most the byte bound.
func (s *SourceMaps) ReadMap(src MapSource) ([]byte, error) { return readMap(src, s.maxBytes) }

// build walks the directories, stopping when ctx ends.
func (s *SourceMaps) build(ctx context.Context) *mapIndex {
	w := &mapWalk{s: s, infos: map[mapFileStamp]mapFileInfo{}, idx: &mapIndex{files: map[string]indexedMapFile{}, debugIDs: map[string]MapSource{}}}
	left := maxIndexedFiles
	for i, dir := range s.dirs {
		w.root = i
		n := 0
		if !s.roots.Walk(ctx, dir, left, func(real, rel string) { n++; w.file(real, rel) }) {
			w.idx.truncated = ctx.Err() == nil
			break
		}
		left -= n
	}
	w.resolveBundles()
	s.infos = w.infos
	return w.idx
}

// walk is one scan under way.
type mapWalk struct {
	s     *SourceMaps
	root  int
	infos map[mapFileStamp]mapFileInfo // what this scan read
	idx   *mapIndex
	// bundles are what was read of the bundles: their maps are known
	// once every file is.
	bundles []scannedBundle
}

type scannedBundle struct {
	rel  string
	info mapFileInfo
}

// file indexes one regular file.
func (w *mapWalk) file(real, rel string) {
	shadowed := w.add(real, rel)
	ext := strings.ToLower(path.Ext(rel))
	if ext != ".map" && !isBundleExt(ext) {
		return
	}
	info, ok := w.info(real)
	switch {
	case !ok:
	case ext == ".map":
		w.addMapDebugID(info.debugID, MapSource{Path: real, Rel: rel})
	case !shadowed:
		// A bundle under the same path in an earlier directory hides
		// this one: its sourceMappingURL is relative to its own.
		w.bundles = append(w.bundles, scannedBundle{rel: rel, info: info})
	}
}

// add indexes a file by its path unless an earlier directory has that
// path (shadowed: true).
func (w *mapWalk) add(real, rel string) (shadowed bool) {
	if _, shadowed = w.idx.files[rel]; !shadowed {
		w.idx.files[rel] = indexedMapFile{root: w.root, real: real}
	}
	return shadowed
}

// addMapDebugID indexes a map file by its debug id; the first map with an
// id wins.
func (w *mapWalk) addMapDebugID(id string, src MapSource) {
	if _, dup := w.idx.debugIDs[id]; id != "" && !dup {
		w.idx.debugIDs[id] = src
	}
}

func isBundleExt(ext string) bool { return ext == ".js" || ext == ".mjs" || ext == ".cjs" }

// info reads a map's or bundle's debug id and sourceMappingURL, or takes
// them from the previous scan when the file did not change.
func (w *mapWalk) info(real string) (mapFileInfo, bool) {
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return mapFileInfo{}, false
	}
	stamp := mapFileStamp{real: real, size: st.Size(), mtime: st.ModTime()}
	info, ok := w.s.infos[stamp]
	if !ok {
		if info, ok = w.s.read(real); !ok {
			return mapFileInfo{}, false
		}
	}
	w.infos[stamp] = info
	return info, true
}

// read reads a map's or bundle's info from its file.
func (s *SourceMaps) read(real string) (mapFileInfo, bool) {
	b, err := ReadRegular(real, s.maxBytes)
	if err != nil {
		return mapFileInfo{}, false
	}
	return infoOf(filepath.Ext(real), b), true
}

// infoOf reads the debug id of a map, or the debug id and last
// sourceMappingURL of a bundle.
func infoOf(ext string, b []byte) mapFileInfo {
	if strings.EqualFold(ext, ".map") {
		return mapFileInfo{debugID: debugIDIn(mapDebugID, b)}
	}
	info := mapFileInfo{debugID: debugIDIn(bundleDebugID, b), sourceMappingURL: lastSourceMappingURL(b)}
	if strings.HasPrefix(info.sourceMappingURL, "data:") {
		// The whole URL is read again when the map is loaded.
		info.sourceMappingURL = "data:"
	}
	return info
}

// debugIDIn is the first debug id pattern matches in b, lower case; ""
// when there is none.
func debugIDIn(pattern *regexp.Regexp, b []byte) string {
	if m := pattern.FindSubmatch(b); m != nil {
		return strings.ToLower(string(m[1]))
	}
	return ""
}

// resolveBundles follows each bundle's sourceMappingURL to its map, now
// that every file is known, and adds the debug ids of bundles; a map's
// own debug id wins over an inline map's.
func (w *mapWalk) resolveBundles() {
	for _, b := range w.bundles {
		f := w.idx.files[b.rel]
		src, err := w.idx.mapOfBundle(b.rel, f, b.info.sourceMappingURL)
		if err != nil {
			continue
		}
		f.bundle = &src
		w.idx.files[b.rel] = f
		w.addBundleDebugID(b.info.debugID, src)
	}
}

// addBundleDebugID indexes a bundle's map by the bundle's debug id,
// unless a map file already has it (an inline map gives way to a file).
func (w *mapWalk) addBundleDebugID(id string, src MapSource) {
	if id == "" {
		return
	}
	if cur, dup := w.idx.debugIDs[id]; !dup || cur.Inline && !src.Inline {
		w.idx.debugIDs[id] = src
	}
}

// mapOfBundle follows a bundle's sourceMappingURL (ref) to its map: a file
// of the index (relative URLs only: no network, never outside the
// bundle's directory root) or an inline data: URL.
func (idx *mapIndex) mapOfBundle(rel string, f indexedMapFile, ref string) (MapSource, error) {
	switch {
	case ref == "":
		return MapSource{}, fmt.Errorf("%s: no sourceMappingURL comment: %w", rel, errNoMap)
	case ref == "data:":
		return MapSource{Path: f.real, Rel: rel, Inline: true}, nil
	case isAbsoluteRef(ref):
		return MapSource{}, fmt.Errorf("%s: sourceMappingURL %q is not relative to the bundle: %w", rel, ref, errNoMap)
	}
	return idx.relativeMap(rel, f, ref)
}

// relativeMap is the map file a bundle's relative sourceMappingURL names,
// in the bundle's own directory root.
func (idx *mapIndex) relativeMap(rel string, f indexedMapFile, ref string) (MapSource, error) {
	target, err := relativeTarget(rel, ref)
	if err != nil {
		return MapSource{}, err
	}
	m, ok := idx.files[target]
	if !ok || m.root != f.root {
		return MapSource{}, fmt.Errorf("%s: sourceMappingURL %q: no such file in its directory: %w", rel, ref, errNoMap)
	}
	return MapSource{Path: m.real, Rel: target}, nil
}

// isAbsoluteRef reports whether a URL or path is absolute: a URL with a
// scheme, or a path from the root.
func isAbsoluteRef(ref string) bool {
	return strings.Contains(ref, "://") || strings.HasPrefix(ref, "/")
}

// relativeTarget is the index path a bundle's relative sourceMappingURL
// names; an error when it climbs out of the bundle's directory root.
func relativeTarget(rel, ref string) (string, error) {
	unescaped, err := url.PathUnescape(strings.SplitN(ref, "?", 2)[0])
	if err != nil {
		return "", fmt.Errorf("%s: sourceMappingURL %q: %w", rel, ref, err)
	}
	target := path.Join(path.Dir(rel), unescaped)
	if leavesRoot(target) {
		return "", fmt.Errorf("%s: sourceMappingURL %q leads outside its directory: %w", rel, ref, errNoMap)
	}
	return target, nil
}

// leavesRoot reports whether a cleaned slash path relative to a
// directory root climbs out of it.
func leavesRoot(target string) bool {
	return target == ".." || strings.HasPrefix(target, "../") || path.IsAbs(target)
}

package sourcemap

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

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
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

// scanner makes the indexes of the directories (through
// sources.Scans, in the background, one at a time) and keeps what
// the last scan read of each file for the next.
type scanner struct {
	dirs     []string
	roots    sources.Roots
	maxBytes int64
	scans    *sources.Scans[*dirIndex]
	// infos is what the last scan read; only a scan (one at a time)
	// reads and writes it.
	infos map[fileStamp]fileInfo
}

func newScanner(dirs []string, maxBytes int64, rescan time.Duration) (*scanner, error) {
	roots, err := sources.NewRoots(dirs)
	if err != nil {
		return nil, fmt.Errorf("source map directories: %w", err)
	}
	s := &scanner{dirs: dirs, roots: roots, maxBytes: maxBytes, infos: map[fileStamp]fileInfo{}}
	s.scans = sources.NewScans("source map directories", rescan, s.build)
	return s, nil
}

// build walks the directories, stopping when ctx ends.
func (s *scanner) build(ctx context.Context) *dirIndex {
	w := &walk{s: s, infos: map[fileStamp]fileInfo{}, idx: &dirIndex{files: map[string]indexedFile{}, debugIDs: map[string]mapSource{}}}
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
type walk struct {
	s     *scanner
	root  int
	infos map[fileStamp]fileInfo // what this scan read
	idx   *dirIndex
	// bundles are what was read of the bundles: their maps are known
	// once every file is.
	bundles []bundleFile
}

type bundleFile struct {
	rel  string
	info fileInfo
}

// file indexes one regular file.
func (w *walk) file(real, rel string) {
	shadowed := w.add(real, rel)
	ext := strings.ToLower(path.Ext(rel))
	if ext != ".map" && !isBundleExt(ext) {
		return
	}
	info, ok := w.info(real)
	switch {
	case !ok:
	case ext == ".map":
		w.addMapDebugID(info.debugID, mapSource{path: real, rel: rel})
	case !shadowed:
		// A bundle under the same path in an earlier directory hides
		// this one: its sourceMappingURL is relative to its own.
		w.bundles = append(w.bundles, bundleFile{rel: rel, info: info})
	}
}

// add indexes a file by its path unless an earlier directory has that
// path (shadowed: true).
func (w *walk) add(real, rel string) (shadowed bool) {
	if _, shadowed = w.idx.files[rel]; !shadowed {
		w.idx.files[rel] = indexedFile{root: w.root, real: real}
	}
	return shadowed
}

// addMapDebugID indexes a map file by its debug id; the first map with an
// id wins.
func (w *walk) addMapDebugID(id string, src mapSource) {
	if _, dup := w.idx.debugIDs[id]; id != "" && !dup {
		w.idx.debugIDs[id] = src
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
	info, ok := w.s.infos[stamp]
	if !ok {
		if info, ok = w.s.read(real); !ok {
			return fileInfo{}, false
		}
	}
	w.infos[stamp] = info
	return info, true
}

// read reads a map's or bundle's info from its file.
func (s *scanner) read(real string) (fileInfo, bool) {
	b, err := sources.ReadRegular(real, s.maxBytes)
	if err != nil {
		return fileInfo{}, false
	}
	return infoOf(filepath.Ext(real), b), true
}

// infoOf reads the debug id of a map, or the debug id and last
// sourceMappingURL of a bundle.
func infoOf(ext string, b []byte) fileInfo {
	if strings.EqualFold(ext, ".map") {
		return fileInfo{debugID: debugIDIn(mapDebugID, b)}
	}
	info := fileInfo{debugID: debugIDIn(bundleDebugID, b), sourceMappingURL: lastSourceMappingURL(b)}
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
func (w *walk) resolveBundles() {
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
func (w *walk) addBundleDebugID(id string, src mapSource) {
	if id == "" {
		return
	}
	if cur, dup := w.idx.debugIDs[id]; !dup || cur.inline && !src.inline {
		w.idx.debugIDs[id] = src
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
	case isAbsoluteRef(ref):
		return mapSource{}, fmt.Errorf("%s: sourceMappingURL %q is not relative to the bundle: %w", rel, ref, errNotFound)
	}
	return idx.relativeMap(rel, f, ref)
}

// relativeMap is the map file a bundle's relative sourceMappingURL names,
// in the bundle's own directory root.
func (idx *dirIndex) relativeMap(rel string, f indexedFile, ref string) (mapSource, error) {
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
		return "", fmt.Errorf("%s: sourceMappingURL %q leads outside its directory: %w", rel, ref, errNotFound)
	}
	return target, nil
}

// leavesRoot reports whether a cleaned slash path relative to a
// directory root climbs out of it.
func leavesRoot(target string) bool {
	return target == ".." || strings.HasPrefix(target, "../") || path.IsAbs(target)
}

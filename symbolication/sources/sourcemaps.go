package sources

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

var (
	sourceMappingURLComment = regexp.MustCompile(`//[#@]\s*sourceMappingURL=(\S+)\s*$`)
	// A bundle's debug id: the `//# debugId=` comment that sentry-cli and
	// newer bundlers write, or the id Sentry's bundler plugins inject into
	// the code (`sentry-dbid-<uuid>`).
	bundleDebugID = regexp.MustCompile(`(?://# debugId=|sentry-dbid-)([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})`)
	mapDebugID    = regexp.MustCompile(`"debug_?[iI]d"\s*:\s*"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"`)
)

// errNoMap says that no file of a directory fits.
var errNoMap = errors.New("not found")

// urlPath is the path part of a frame's file: the path of a URL (http,
// https, file, app:// as Sentry's SDKs rewrite Node paths), or the file
// path itself, cleaned and without its leading slash; "" for what cannot
// name a file (node:internal, <anonymous>, native).
func urlPath(file string) string {
	p, ok := schemePath(file)
	if !ok {
		return ""
	}
	p = strings.TrimLeft(path.Clean("/"+filepath.ToSlash(p)), "/")
	if p == "." {
		return ""
	}
	return p
}

// schemePath is the path of a URL of a scheme that names files, or file
// itself when it is not a URL (a one-letter scheme is a Windows drive);
// false for another scheme.
func schemePath(file string) (string, bool) {
	u, err := url.Parse(file)
	if err != nil || len(u.Scheme) <= 1 {
		return file, true
	}
	switch u.Scheme {
	case "http", "https", "file", "app":
		return u.Path, true
	}
	return "", false
}

// Bounds of a frame's file name, which comes from the network: the path
// lookup costs at most maxPathTails map lookups of at most maxPathBytes
// each, whatever the frame sends.
const (
	// maxPathBytes is PATH_MAX on Linux: no file of the directories has a
	// longer relative path, so a longer frame path cannot name one. The
	// bound is on the frame's whole file (URL), read before any parsing.
	maxPathBytes = 4096
	// maxPathTails is how many tails of the path are tried, the shortest
	// ones: a frame's path matches a file whose path, relative to its
	// directory, is at most this many components deep.
	maxPathTails = 32
)

// tails returns the tails of p by whole components, longest first, at
// most maxPathTails of them and so at most maxPathTails components deep:
// for a/b/c.js, a/b/c.js, b/c.js, c.js.
func tails(p string) []string {
	starts := []int{len(p)}
	for i := len(p) - 1; i >= 0 && len(starts) <= maxPathTails; i-- {
		if p[i] == '/' {
			starts = append(starts, i+1)
		}
	}
	if len(starts) <= maxPathTails {
		starts = append(starts, 0)
	}
	out := make([]string, 0, len(starts)-1)
	for k := len(starts) - 1; k >= 1; k-- {
		out = append(out, p[starts[k]:])
	}
	return out
}

// MapSource says where a map is: a file, or inline in a bundle.
type MapSource struct {
	// Path is the real path of the .map file, or of the bundle holding an
	// inline map.
	Path string
	// Rel is the file's slash path in its directory: its sources are
	// named relative to it.
	Rel string
	// Inline is set when the map is a data: URL in the bundle.
	Inline bool
}

// byPath finds the source map of a bundle by its URL or path, laid out
// like the bundles' URLs: <dir>/<path>.map first, then the map a local copy
// <dir>/<path> names (its sourceMappingURL, read by the scan). Shorter
// tails of the path are tried after the whole one, so that a directory
// holding dist/app.js serves /srv/www/dist/app.js; within one tail an
// earlier directory wins. The cost is independent of the directories'
// size and bounded by maxPathBytes and maxPathTails.
func (idx *mapIndex) byPath(file string) (MapSource, error) {
	if len(file) > maxPathBytes {
		return MapSource{}, fmt.Errorf("frame file of %d bytes, over %d: %w", len(file), maxPathBytes, errNoMap)
	}
	p := urlPath(file)
	if p == "" {
		return MapSource{}, errNoMap
	}
	for _, tail := range tails(p) {
		if src, found, err := idx.atTail(tail); found {
			return src, err
		}
	}
	return MapSource{}, errNoMap
}

// atTail is the map of the bundle at one tail of a frame's path: the map
// beside it (<tail>.map), unless a bundle of an earlier directory is there
// with its own map. found is false when neither file is in the index.
func (idx *mapIndex) atTail(tail string) (src MapSource, found bool, err error) {
	m, hasMap := idx.files[tail+".map"]
	b, hasBundle := idx.files[tail]
	switch {
	case hasMap && (!hasBundle || m.root <= b.root):
		return MapSource{Path: m.real, Rel: tail + ".map"}, true, nil
	case !hasBundle:
		return MapSource{}, false, nil
	case b.bundle != nil:
		return *b.bundle, true, nil
	}
	return MapSource{}, true, fmt.Errorf("%s: no usable sourceMappingURL: %w", tail, errNoMap)
}

// lastSourceMappingURL is the URL of the last sourceMappingURL comment
// among the last four lines of a bundle. It reads those lines only, from
// the end, so a bundle of many lines costs no more than one of a few.
func lastSourceMappingURL(b []byte) string {
	b = bytes.TrimRight(b, "\r\n\t ")
	for range 4 {
		if len(b) == 0 {
			return ""
		}
		start := bytes.LastIndexByte(b, '\n') + 1
		if m := sourceMappingURLComment.FindSubmatch(bytes.TrimSpace(b[start:])); m != nil {
			return string(m[1])
		}
		b = b[:max(start-1, 0)]
	}
	return ""
}

// readMap reads the bytes of a map: the file, or the bundle's inline data:
// URL (base64 or percent-encoded), at most maxBytes.
func readMap(src MapSource, maxBytes int64) ([]byte, error) {
	if !src.Inline {
		return ReadRegular(src.Path, maxBytes)
	}
	whole, err := ReadRegular(src.Path, maxBytes)
	if err != nil {
		return nil, err
	}
	return decodeDataURL(src.Path, lastSourceMappingURL(whole))
}

// decodeDataURL decodes a bundle's inline map, a data: URL in base64 or
// percent-encoded.
func decodeDataURL(bundle, ref string) ([]byte, error) {
	comma := strings.IndexByte(ref, ',')
	if !strings.HasPrefix(ref, "data:") || comma < 0 {
		return nil, fmt.Errorf("%s: inline source map is not a data: URL", bundle)
	}
	meta, data := ref[len("data:"):comma], ref[comma+1:]
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	s, err := url.PathUnescape(data)
	return []byte(s), err
}

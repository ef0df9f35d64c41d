package sourcemap

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// tailBytes is how much of a bundle's end is read for its
// `//# sourceMappingURL=` and `//# debugId=` comments, which bundlers write
// last.
const tailBytes = 64 << 10

var (
	sourceMappingURLComment = regexp.MustCompile(`//[#@]\s*sourceMappingURL=(\S+)\s*$`)
	// A bundle's debug id: the `//# debugId=` comment that sentry-cli and
	// newer bundlers write, or the id Sentry's bundler plugins inject into
	// the code (`sentry-dbid-<uuid>`).
	bundleDebugID = regexp.MustCompile(`(?://# debugId=|sentry-dbid-)([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})`)
	mapDebugID    = regexp.MustCompile(`"debug_?[iI]d"\s*:\s*"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"`)
)

// errNotFound says that no file of a directory fits.
var errNotFound = errors.New("not found")

// urlPath is the path part of a frame's file: the path of a URL (http,
// https, file, app:// as Sentry's SDKs rewrite Node paths), or the file
// path itself, cleaned and without its leading slash; "" for what cannot
// name a file (node:internal, <anonymous>, native).
func urlPath(file string) string {
	p := file
	if u, err := url.Parse(file); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		switch u.Scheme {
		case "http", "https", "file", "app":
			p = u.Path
		default:
			return ""
		}
	}
	p = strings.TrimLeft(path.Clean("/"+filepath.ToSlash(p)), "/")
	if p == "" || p == "." {
		return ""
	}
	return p
}

// suffixes returns p and its shorter tails by whole components, longest
// first: a/b/c.js, b/c.js, c.js.
func suffixes(p string) []string {
	out := []string{p}
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return out
		}
		p = p[i+1:]
		out = append(out, p)
	}
}

// mapSource says where a map is: a file, or inline in a bundle.
type mapSource struct {
	path string // the .map file, or the bundle holding an inline map
	// inline is set when the map is a data: URL in the bundle.
	inline bool
}

// findMapByPath finds the source map of a bundle under one of the dirs,
// laid out like the bundle's URLs: <dir>/<path>.map first, then the
// sourceMappingURL comment of a local copy <dir>/<path>. Shorter tails of
// the path are tried after the whole one, so that a directory holding
// dist/app.js serves /srv/www/dist/app.js.
func findMapByPath(dirs []string, file string) (mapSource, error) {
	p := urlPath(file)
	if p == "" {
		return mapSource{}, errNotFound
	}
	for _, s := range suffixes(p) {
		for _, dir := range dirs {
			bundle := filepath.Join(dir, filepath.FromSlash(s))
			if isFile(bundle + ".map") {
				return mapSource{path: bundle + ".map"}, nil
			}
			if isFile(bundle) {
				return mapOfBundle(dir, bundle)
			}
		}
	}
	return mapSource{}, errNotFound
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// mapOfBundle follows a local bundle's sourceMappingURL comment to its map:
// a file beside it (relative URLs only: no network, and never outside the
// configured directory root) or an inline data: URL.
func mapOfBundle(root, bundle string) (mapSource, error) {
	tail, err := readTail(bundle)
	if err != nil {
		return mapSource{}, err
	}
	ref := lastSourceMappingURL(tail)
	switch {
	case ref == "":
		return mapSource{}, fmt.Errorf("%s: no sourceMappingURL comment: %w", bundle, errNotFound)
	case strings.HasPrefix(ref, "data:"):
		return mapSource{path: bundle, inline: true}, nil
	case strings.Contains(ref, "://") || strings.HasPrefix(ref, "/"):
		return mapSource{}, fmt.Errorf("%s: sourceMappingURL %q is not relative to the bundle: %w", bundle, ref, errNotFound)
	}
	rel, err := url.PathUnescape(strings.SplitN(ref, "?", 2)[0])
	if err != nil {
		return mapSource{}, fmt.Errorf("%s: sourceMappingURL %q: %w", bundle, ref, err)
	}
	p := filepath.Join(filepath.Dir(bundle), filepath.FromSlash(path.Clean(rel)))
	if !within(root, p) {
		return mapSource{}, fmt.Errorf("%s: sourceMappingURL %q leads outside %s: %w", bundle, ref, root, errNotFound)
	}
	return mapSource{path: p}, nil
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func readTail(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-tailBytes, 0)
	return io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
}

// lastSourceMappingURL is the URL of the last sourceMappingURL comment line.
func lastSourceMappingURL(tail []byte) string {
	lines := bytes.Split(bytes.TrimRight(tail, "\r\n\t "), []byte("\n"))
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-4; i-- {
		if m := sourceMappingURLComment.FindSubmatch(bytes.TrimSpace(lines[i])); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// readMap reads the bytes of a map: the file, or the bundle's inline data:
// URL (base64 or percent-encoded), at most maxBytes.
func readMap(src mapSource, maxBytes int64) ([]byte, error) {
	if !src.inline {
		return readFileLimited(src.path, maxBytes)
	}
	tail, err := readTail(src.path)
	if err != nil {
		return nil, err
	}
	ref := lastSourceMappingURL(tail)
	if len(tail) == tailBytes {
		// An inline map can be longer than the tail: read the whole bundle.
		whole, err := readFileLimited(src.path, maxBytes)
		if err != nil {
			return nil, err
		}
		ref = lastSourceMappingURL(whole)
	}
	comma := strings.IndexByte(ref, ',')
	if !strings.HasPrefix(ref, "data:") || comma < 0 {
		return nil, fmt.Errorf("%s: inline source map is not a data: URL", src.path)
	}
	meta, data := ref[len("data:"):comma], ref[comma+1:]
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	s, err := url.PathUnescape(data)
	return []byte(s), err
}

func readFileLimited(file string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("%s: larger than the %d bytes allowed for an artifact", file, maxBytes)
	}
	return b, nil
}

// scanDebugIDs indexes the debug ids found under dirs: the "debugId" of a
// .map file, and the debug id a bundle (.js, .mjs, .cjs) carries, whose map
// is found through its sourceMappingURL. Unreadable files are skipped; the
// first error is returned beside the index.
func scanDebugIDs(dirs []string, maxBytes int64) (map[string]mapSource, error) {
	index := map[string]mapSource{}
	var firstErr error
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			id, src := debugIDOfFile(dir, p, maxBytes)
			if id != "" {
				if _, dup := index[id]; !dup || !src.inline {
					index[id] = src
				}
			}
			return nil
		})
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("scan %s: %w", dir, err)
		}
	}
	return index, firstErr
}

// debugIDOfFile returns the debug id of a map or bundle file and where its
// map is; "" for other files and files without one.
func debugIDOfFile(root, p string, maxBytes int64) (string, mapSource) {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".map":
		b, err := readFileLimited(p, maxBytes)
		if err != nil {
			return "", mapSource{}
		}
		if m := mapDebugID.FindSubmatch(b); m != nil {
			return strings.ToLower(string(m[1])), mapSource{path: p}
		}
	case ".js", ".mjs", ".cjs":
		b, err := readFileLimited(p, maxBytes)
		if err != nil {
			return "", mapSource{}
		}
		if m := bundleDebugID.FindSubmatch(b); m != nil {
			if src, err := mapOfBundle(root, p); err == nil {
				return strings.ToLower(string(m[1])), src
			}
		}
	}
	return "", mapSource{}
}

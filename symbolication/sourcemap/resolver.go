package sourcemap

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// Options configure a Resolver.
type Options struct {
	// Dirs hold source maps (and optionally local copies of the bundles),
	// laid out like the bundles' URL paths, and are scanned for debug ids.
	Dirs []string
	// MaxCacheBytes bounds the parsed maps kept in memory.
	MaxCacheBytes int64
	// MaxArtifactBytes bounds one map file (and a bundle read for its
	// inline map).
	MaxArtifactBytes int64
	// RescanInterval is the least time between two scans of Dirs for debug
	// ids, made when a frame asks for one the last scan did not see (a new
	// release deployed beside the old).
	RescanInterval time.Duration
	// ParseScopes parses the scopes of the bundle beside a map, when the
	// map is loaded (jsscope.Parse, adapted); nil names frames by the map
	// alone.
	ParseScopes func(bundle []byte) (Scopes, error)
}

// maxConcurrentParses bounds the maps parsed at once: each may be up to
// MaxArtifactBytes and take about as much memory again while parsed, and
// a batch's frames can name many maps. Past it a map not loading yet is
// ErrPending, asked again by a later frame.
const maxConcurrentParses = 4

// Resolver resolves minified JavaScript frames with the source maps under
// its directories, found by sources.SourceMaps (local regular files only,
// and only those whose real path, symbolic links followed, is within its
// directories), parsed once into a symbolication.Cache.
type Resolver struct {
	opts  Options
	maps  *symbolication.Cache[sources.MapSource, *loadedMap]
	found *sources.SourceMaps
}

// loadedMap is a parsed map and the directory its relative sources are
// relative to, within the configured directory it came from.
type loadedMap struct {
	m *Map
	// scopes are the function scopes of the map's bundle (scope.go), nil
	// when it was not found or could not be read.
	scopes    Scopes
	sourceDir string
	// path is the file it was read from, for errors.
	path string
}

// NewResolver returns a resolver over opts.Dirs, which must exist, and
// starts scanning them in the background. Close stops the scans.
func NewResolver(opts Options) (*Resolver, error) {
	if opts.MaxArtifactBytes <= 0 {
		opts.MaxArtifactBytes = 256 << 20
	}
	// The first scan starts now, so that the first frames find it done;
	// they do not wait for it here.
	found, err := sources.NewSourceMaps(opts.Dirs, opts.MaxArtifactBytes, opts.RescanInterval)
	if err != nil {
		return nil, err
	}
	r := &Resolver{opts: opts, found: found}
	// A map that was missing or broken is looked for again after a
	// rescan interval: a release deployed later is found.
	retry := max(opts.RescanInterval, time.Nanosecond)
	r.maps = symbolication.NewCache(symbolication.CacheOptions{
		MaxBytes: opts.MaxCacheBytes, Background: true, MaxLoads: maxConcurrentParses, Retry: symbolication.RetryAll(retry),
	}, r.load)
	return r, nil
}

// Close stops a directory scan and the map loads under way; the Resolver
// scans and loads no more.
func (r *Resolver) Close() {
	r.found.Close()
	r.maps.Close()
}

// CacheStats reports the parsed-map cache.
func (r *Resolver) CacheStats() symbolication.CacheStats { return r.maps.Stats() }

// Resolve maps a minified frame (Frame.File the bundle's URL or path,
// Frame.Line and Frame.Column 1-based, where the profiler says the function
// starts; for a map of Hermes bytecode, line 1 and the bytecode offset + 1)
// to its original function, file, line and column. The map is the
// one of in.DebugID when that is known, else the one found by the frame's
// file. Function keeps the frame's own name when the map names nothing
// there.
//
// A directory scan under way is waited for while ctx allows; when ctx ends
// first the error wraps symbolication.ErrPending.
func (r *Resolver) Resolve(ctx context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	f := in.Frame
	if f.Line <= 0 || f.Column <= 0 {
		return nil, fmt.Errorf("%s has no line and column: %w", f.File, symbolication.ErrNoMatch)
	}
	lm, err := r.mapOf(ctx, in)
	if err != nil {
		return nil, err
	}
	tok, ok := lm.frameOf(f, in.Executing)
	if !ok {
		return nil, fmt.Errorf("%s:%d:%d in %s: %w", f.File, f.Line, f.Column, lm.path, symbolication.ErrNoMatch)
	}
	return []symbolication.Frame{{
		Function: tok.Name,
		File:     lm.sourcePath(tok.Source),
		Line:     tok.Line + 1,
		Column:   tok.Column + 1,
	}}, nil
}

// mapOf is the parsed map of a frame, located and loaded.
func (r *Resolver) mapOf(ctx context.Context, in symbolication.Lookup) (*loadedMap, error) {
	src, err := r.found.Locate(ctx, in.DebugID, in.Frame.File)
	if err != nil {
		return nil, err
	}
	lm, err := r.maps.Get(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("load source map %s: %w", src.Path, err)
	}
	return lm, nil
}

// functionOf is the original function of a frame by its position (line
// and column 1-based): the name the map gives the function's start, or by
// its column alone (a caller-line frame), else the original position with
// the frame's own name; false when the map has nothing there.
func (m *Map) functionOf(f symbolication.Frame) (Token, bool) {
	if tok, named := m.FunctionAt(f.Line-1, f.Column-1); named {
		return tok, true
	}
	if tok, named := m.functionAtColumn(f.Column - 1); named {
		return tok, true
	}
	tok, ok := m.PositionAt(f.Line-1, f.Column-1)
	tok.Name = f.Function
	return tok, ok && tok.HasSource
}

// load reads and parses a located map: the artifacts cache's load.
func (r *Resolver) load(_ context.Context, src sources.MapSource) (*loadedMap, int64, error) {
	b, err := r.found.ReadMap(src)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", symbolication.ErrFetch, err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", symbolication.ErrMalformed, err)
	}
	lm := &loadedMap{m: m, sourceDir: path.Dir(src.Rel), path: src.Path}
	if lm.sourceDir == "." {
		lm.sourceDir = ""
	}
	size := m.Size() + int64(len(lm.sourceDir)+len(lm.path))
	if lm.scopes = loadScopes(r.opts.ParseScopes, src, m, r.opts.MaxArtifactBytes); lm.scopes != nil {
		size += lm.scopes.Size()
	}
	return lm, size, nil
}

// sourcePath names an original source: as the map names it when that is a
// URL or an absolute path, else relative to the map's place in the
// directory (../src/app.ts of assets/app.js.map is src/app.ts).
func (lm *loadedMap) sourcePath(source string) string {
	if source == "" || strings.Contains(source, "://") || strings.HasPrefix(source, "/") {
		return source
	}
	return path.Clean(path.Join(lm.sourceDir, source))
}

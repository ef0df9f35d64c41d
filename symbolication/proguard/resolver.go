package proguard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// Options configure a Resolver.
type Options struct {
	// Dirs hold the mappings, which must exist.
	Dirs []string
	// MaxCacheBytes bounds the parsed mappings kept in memory.
	MaxCacheBytes int64
	// MaxArtifactBytes bounds one mapping file.
	MaxArtifactBytes int64
	// RescanInterval is the least time between two scans of Dirs, made
	// when a frame names a UUID the last scan did not see, and how long a
	// missing or broken mapping is remembered.
	RescanInterval time.Duration
}

// Resolver serves ProGuard/R8 mappings from directories, by the UUID a
// profile names them with (Sentry's Android SDK sends it as the uuid of
// its `proguard` debug image; the Gradle plugin stores the mapping under
// it). A mapping is found as <dir>/<uuid>.txt, <dir>/<uuid>/mapping.txt,
// or any .txt file whose content UUID (sentry-cli's UUID of an upload
// without --uuid) is the one asked for.
//
// The directories are indexed by background scans (sources.Scans):
// regular files only, links followed only within the directories, each
// file read at most MaxArtifactBytes, and a file's content UUID read again
// only when its size or modification time changed. Parsed mappings are
// kept in a symbolication.Cache that loads them in the background.
type Resolver struct {
	roots    sources.Roots
	dirs     []string
	maxBytes int64
	mappings *symbolication.Cache[string, *Mapping]
	scans    *sources.Scans[map[string]string] // UUID → real path
	// contentUUIDs is what the last scan read; only a scan (one at a
	// time) uses it.
	contentUUIDs map[fileStamp]string
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	path  string
	size  int64
	mtime time.Time
}

// maxConcurrentParses bounds the mappings parsed at once: each may be up
// to MaxArtifactBytes and take about twice that while parsed. Past it a
// mapping not loading yet is ErrPending, asked again by a later frame.
const maxConcurrentParses = 4

// maxScannedMappings bounds the files of one scan of the directories.
const maxScannedMappings = 200_000

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// NewResolver returns a resolver over opts.Dirs and starts scanning them
// in the background. Close stops the scans and loads.
func NewResolver(opts Options) (*Resolver, error) {
	if err := sources.CheckDirectories("proguard", opts.Dirs); err != nil {
		return nil, err
	}
	roots, err := sources.NewRoots(opts.Dirs)
	if err != nil {
		return nil, fmt.Errorf("proguard directories: %w", err)
	}
	r := &Resolver{roots: roots, dirs: opts.Dirs, maxBytes: opts.MaxArtifactBytes, contentUUIDs: map[fileStamp]string{}}
	r.mappings = symbolication.NewCache(symbolication.CacheOptions{
		MaxBytes: opts.MaxCacheBytes, Background: true, MaxLoads: maxConcurrentParses,
		Retry: symbolication.RetryAll(max(opts.RescanInterval, time.Nanosecond)),
	}, r.load)
	r.scans = sources.NewScans("proguard directories", opts.RescanInterval, r.scan)
	r.scans.Start()
	return r, nil
}

// Close stops the scan and the loads under way.
func (r *Resolver) Close() {
	r.scans.Close()
	r.mappings.Close()
}

// CacheStats reports the cache of parsed mappings.
func (r *Resolver) CacheStats() symbolication.CacheStats { return r.mappings.Stats() }

// Resolve de-obfuscates one JVM frame: Frame.Module the obfuscated class,
// Frame.Function the method, Frame.Line the line; in.DebugID the mapping's
// UUID. The answer is innermost first when code was inlined.
func (r *Resolver) Resolve(ctx context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	uuid := strings.ToLower(in.DebugID)
	if uuid == "" {
		return nil, fmt.Errorf("JVM frame %s.%s without a proguard uuid: %w", in.Frame.Module, in.Frame.Function, symbolication.ErrNoArtifact)
	}
	file, err := r.lookup(ctx, uuid)
	if err != nil {
		return nil, err
	}
	m, err := r.mappings.Get(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("proguard mapping %s: %w", uuid, err)
	}
	remapped := m.Remap(in.Frame.Module, in.Frame.Function, in.Frame.Line)
	if len(remapped) == 0 {
		return nil, fmt.Errorf("class %s in mapping %s: %w", in.Frame.Module, uuid, symbolication.ErrNoMatch)
	}
	return symbolicationFrames(remapped), nil
}

// symbolicationFrames are the answer of Resolve: each frame but the last
// inlined into the next.
func symbolicationFrames(remapped []Frame) []symbolication.Frame {
	out := make([]symbolication.Frame, len(remapped))
	for i, f := range remapped {
		out[i] = symbolication.Frame{Function: f.Method, Module: f.Class, File: f.File, Line: f.Line, Inlined: i < len(remapped)-1}
	}
	return out
}

// load parses a mapping file, a regular file of at most maxBytes (checked
// before reading, and the read stops there should it grow).
func (r *Resolver) load(_ context.Context, file string) (*Mapping, int64, error) {
	f, _, err := sources.OpenRegular(file, r.maxBytes)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", symbolication.ErrFetch, err)
	}
	defer f.Close()
	m, err := Parse(io.LimitReader(f, r.maxBytes))
	if err != nil {
		return nil, 0, fmt.Errorf("parse %s: %w: %w", file, symbolication.ErrMalformed, err)
	}
	return m, m.Size(), nil
}

// lookup finds the file of a UUID, scanning the directories again when it
// is unknown and the last scan is older than the rescan interval.
func (r *Resolver) lookup(ctx context.Context, uuid string) (string, error) {
	file, ok, err := sources.Find(ctx, r.scans, func(index map[string]string) (string, bool) {
		f, ok := index[uuid]
		return f, ok
	})
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("proguard mapping %s: %w", uuid, symbolication.ErrNoArtifact)
	}
	return file, nil
}

// scan indexes the directories: files named by a UUID (or in a directory
// named by one) and .txt mappings by their content UUID.
func (r *Resolver) scan(ctx context.Context) map[string]string {
	index := map[string]string{}
	seen := map[fileStamp]string{}
	left := maxScannedMappings
	for _, dir := range r.dirs {
		n := 0
		complete := r.roots.Walk(ctx, dir, left, func(real, rel string) {
			n++
			r.indexFile(index, seen, real, rel)
		})
		if !complete {
			break
		}
		left -= n
	}
	r.contentUUIDs = seen
	return index
}

// indexFile adds one regular file to the index: by the UUID its name (or
// its directory's) is, and by its content UUID when it is a .txt mapping.
func (r *Resolver) indexFile(index map[string]string, seen map[fileStamp]string, real, rel string) {
	if id := nameUUID(rel); id != "" {
		index[id] = real
	}
	if !strings.EqualFold(path.Ext(rel), ".txt") {
		return
	}
	id, ok := r.contentUUID(seen, real)
	if _, taken := index[id]; ok && id != "" && !taken {
		index[id] = real
	}
}

// nameUUID is the UUID a file is named by: <uuid>.txt, <uuid>/mapping.txt;
// "" for another name.
func nameUUID(rel string) string {
	name := path.Base(rel)
	stem := strings.TrimSuffix(name, path.Ext(name))
	switch parent := path.Base(path.Dir(rel)); {
	case uuidPattern.MatchString(stem):
		return strings.ToLower(stem)
	case uuidPattern.MatchString(parent):
		return strings.ToLower(parent)
	}
	return ""
}

// contentUUID is the content UUID of a mapping file ("" for a file that
// is not a mapping), read again only when the file changed since the last
// scan; seen records it for the next. False when it cannot be read.
func (r *Resolver) contentUUID(seen map[fileStamp]string, real string) (string, bool) {
	st, err := os.Stat(real)
	if err != nil {
		return "", false
	}
	stamp := fileStamp{path: real, size: st.Size(), mtime: st.ModTime()}
	id, ok := r.contentUUIDs[stamp]
	if !ok {
		b, err := sources.ReadRegular(real, r.maxBytes)
		if err != nil {
			return "", false
		}
		if bytes.Contains(b, []byte(" -> ")) {
			id = UUIDOf(b)
		}
	}
	seen[stamp] = id
	return id, true
}

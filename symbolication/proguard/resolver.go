package proguard

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
// The directories are indexed by sources.ProGuardMappings; parsed
// mappings are kept in a symbolication.Cache that loads them in the
// background.
type Resolver struct {
	maxBytes int64
	found    *sources.ProGuardMappings
	mappings *symbolication.Cache[string, *Mapping]
}

// maxConcurrentParses bounds the mappings parsed at once: each may be up
// to MaxArtifactBytes and take about twice that while parsed. Past it a
// mapping not loading yet is ErrPending, asked again by a later frame.
const maxConcurrentParses = 4

// NewResolver returns a resolver over opts.Dirs and starts scanning them
// in the background. Close stops the scans and loads.
func NewResolver(opts Options) (*Resolver, error) {
	found, err := sources.NewProGuardMappings(opts.Dirs, opts.MaxArtifactBytes, opts.RescanInterval, contentUUID)
	if err != nil {
		return nil, err
	}
	r := &Resolver{maxBytes: opts.MaxArtifactBytes, found: found}
	r.mappings = symbolication.NewCache(symbolication.CacheOptions{
		MaxBytes: opts.MaxCacheBytes, Background: true, MaxLoads: maxConcurrentParses,
		Retry: symbolication.RetryAll(max(opts.RescanInterval, time.Nanosecond)),
	}, r.load)
	return r, nil
}

// contentUUID is the content UUID of a file that looks like a mapping
// (it has a " -> " line); "" for any other file.
func contentUUID(content []byte) string {
	if !bytes.Contains(content, []byte(" -> ")) {
		return ""
	}
	return UUIDOf(content)
}

// Close stops the scan and the loads under way.
func (r *Resolver) Close() {
	r.found.Close()
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
	file, err := r.found.Locate(ctx, uuid)
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

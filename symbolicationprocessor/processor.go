package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/native"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
)

// frameProcessor is the processor: the resolver of each configured kind,
// and a cache of resolved frames in front of them. It reads frames out of
// its signal and writes the answers back; finding, loading and looking up
// artifacts is the resolvers'.
type frameProcessor struct {
	cfg       *Config
	resolvers map[symbolication.Kind]symbolication.Resolver
	frames    *symbolication.Cache[frameKey, []symbolication.Frame]
	telemetry *metadata.TelemetryBuilder
	logger    *zap.Logger
	closers   []func()
	// stopping ends with shutdown: a batch under way stops waiting for
	// artifacts then.
	stopping context.Context
	stop     context.CancelFunc
}

// prefetcher is a resolver that can start loading a frame's artifact
// without waiting for it, so that the artifacts of a batch load
// concurrently while its frames are resolved one by one.
type prefetcher interface {
	PrefetchLookup(ctx context.Context, in symbolication.Lookup)
}

// cachedResolver is a resolver that reports its cache of artifacts.
type cachedResolver interface {
	CacheStats() symbolication.CacheStats
}

// How long an unresolved frame is answered from the cache before its
// resolver is asked again: an artifact deployed (or fixed) after the
// first frames that needed it is then used. A frame whose artifact timed
// out is asked again sooner.
const (
	unresolvedRetry = time.Minute
	timedOutRetry   = 10 * time.Second
)

// frameKey is everything a resolver's answer depends on.
type frameKey struct {
	kind                   symbolication.Kind
	debugID, buildID       string
	function, module, file string
	line, column           int
	address, imageAddr     uint64
	executing              bool
}

func keyOf(kind symbolication.Kind, in symbolication.Lookup) frameKey {
	f := in.Frame
	return frameKey{
		kind: kind, debugID: in.DebugID, buildID: in.BuildID,
		function: f.Function, module: f.Module, file: f.File,
		line: f.Line, column: f.Column, address: f.Address, imageAddr: in.ImageAddr,
		executing: in.Executing,
	}
}

// lookup is the resolver's question the key stands for.
func (k *frameKey) lookup() symbolication.Lookup {
	return symbolication.Lookup{
		DebugID: k.debugID, BuildID: k.buildID, ImageAddr: k.imageAddr, Executing: k.executing,
		Frame: symbolication.Frame{
			Function: k.function, Module: k.module, File: k.file,
			Line: k.line, Column: k.column, Address: k.address,
		},
	}
}

func (k *frameKey) size() int64 {
	return int64(len(k.debugID)+len(k.buildID)+len(k.function)+len(k.module)+len(k.file)) + 128
}

func newFrameProcessor(cfg *Config, set component.TelemetrySettings) (*frameProcessor, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, fmt.Errorf("symbolication telemetry: %w", err)
	}
	stopping, stop := context.WithCancel(context.Background())
	s := &frameProcessor{
		cfg:       cfg,
		resolvers: map[symbolication.Kind]symbolication.Resolver{},
		telemetry: tb,
		logger:    set.Logger,
		stopping:  stopping,
		stop:      stop,
	}
	s.frames = symbolication.NewCache(symbolication.CacheOptions{
		MaxBytes: cfg.FrameCacheBytes,
		Retry: symbolication.RetryAfter{
			NotFound: unresolvedRetry, Malformed: unresolvedRetry, Timeout: timedOutRetry, Fetch: unresolvedRetry,
		},
	}, s.resolveFrame)
	return s, nil
}

// start makes the resolver of each configured kind (their directories
// must exist; each starts scanning them in the background) and registers
// the caches' counters.
func (s *frameProcessor) start(context.Context, component.Host) error {
	for _, m := range s.cfg.resolverMakers() {
		if !m.enabled {
			continue
		}
		r, closer, err := m.make()
		if err != nil {
			return err
		}
		s.resolvers[m.kind] = r
		s.closers = append(s.closers, closer)
	}
	return s.registerCacheTelemetry()
}

// shutdown stops the scans, loads and fetches under way, and ends the wait
// of a batch under way: nothing the processor reads holds a shutdown.
func (s *frameProcessor) shutdown(context.Context) error {
	s.stop()
	for _, c := range s.closers {
		c()
	}
	s.telemetry.Shutdown()
	return nil
}

// processProfiles resolves every location of the batch's dictionary that a
// configured kind recognises, in place: the dictionary is shared by all the
// batch's profiles, and a location is one frame wherever a stack uses it.
//
// The batch waits for artifacts being scanned for, loaded or fetched at
// most MaxBatchWait (and not past shutdown); it starts at most
// native::max_fetches_per_batch debuginfod fetches. Frames whose artifact
// is not ready by then pass as they came and are resolved in a later
// batch.
func (s *frameProcessor) processProfiles(ctx context.Context, pd pprofile.Profiles) (pprofile.Profiles, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MaxBatchWait)
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	ctx = native.WithFetchLimit(ctx, s.cfg.Native.MaxFetchesPerBatch)

	b := &batch{p: s, d: newDictionary(pd.Dictionary())}
	b.images = readImages(b.d, pd)
	locs := b.d.d.LocationTable()
	s.prefetch(ctx, b.d, b.images, locs)
	for i := 1; i < locs.Len(); i++ {
		b.resolveLocation(ctx, int32(i), locs.At(i))
	}
	b.counts.record(ctx, s.telemetry)
	return pd, nil
}

// batch is one processProfiles call: its dictionary and images, its
// outcomes, and scratch space reused from location to location.
type batch struct {
	p       *frameProcessor
	d       *dictionary
	images  images
	counts  outcomeCounts
	targets []target
	answers [][]symbolication.Frame
}

// resolveLocation resolves what a configured kind recognises in one
// location and writes the answers back.
func (b *batch) resolveLocation(ctx context.Context, li int32, loc pprofile.Location) {
	var kind symbolication.Kind
	kind, b.targets = b.p.targetsOf(b.targets[:0], b.d, b.images, li, loc)
	if len(b.targets) == 0 {
		return
	}
	b.answers = slices.Grow(b.answers[:0], len(b.targets))[:len(b.targets)]
	for j, t := range b.targets {
		answer, hit, err := b.p.resolve(ctx, kind, t.in)
		b.counts.add(kind, hit, err)
		if err != nil {
			b.p.logUnresolved(kind, t.in, err)
			answer = nil // the line stays as it came
		}
		b.answers[j] = answer
	}
	writeBack(b.d, loc, b.targets, b.answers)
}

// prefetch starts loading the artifacts of the batch's frames whose
// resolvers can load in the background, before any frame waits for one.
func (s *frameProcessor) prefetch(ctx context.Context, d *dictionary, images images, locs pprofile.LocationSlice) {
	if _, ok := s.resolvers[symbolication.KindNative].(prefetcher); !ok {
		return // only native artifacts are worth starting before the walk
	}
	var targets []target
	for i := 1; i < locs.Len(); i++ {
		var kind symbolication.Kind
		kind, targets = s.targetsOf(targets[:0], d, images, int32(i), locs.At(i))
		p, ok := s.resolvers[kind].(prefetcher)
		if !ok {
			continue
		}
		for _, t := range targets {
			p.PrefetchLookup(ctx, t.in)
		}
	}
}

// resolve asks the kind's resolver, through the cache of resolved frames;
// hit says the cache answered.
func (s *frameProcessor) resolve(ctx context.Context, kind symbolication.Kind, in symbolication.Lookup) (answer []symbolication.Frame, hit bool, err error) {
	return s.frames.GetCounted(ctx, keyOf(kind, in))
}

// resolveFrame is the frames cache's load: the kind's resolver's answer
// and what it costs in memory.
func (s *frameProcessor) resolveFrame(ctx context.Context, key frameKey) ([]symbolication.Frame, int64, error) {
	answer, err := s.resolvers[key.kind].Resolve(ctx, key.lookup())
	size := key.size()
	for _, a := range answer {
		size += int64(len(a.Function)+len(a.Module)+len(a.File)) + 64
	}
	return answer, size, err
}

func (s *frameProcessor) logUnresolved(kind symbolication.Kind, in symbolication.Lookup, err error) {
	if reasonOf(err) != reasonLoadError {
		return
	}
	s.logger.Debug("artifact could not be loaded", zap.String("kind", string(kind)),
		zap.String("file", in.Frame.File), zap.String("debug_id", in.DebugID), zap.String("build_id", in.BuildID), zap.Error(err))
}

// reasonOf classifies a resolver's error for the unresolved-frames metric.
func reasonOf(err error) string {
	switch {
	case symbolication.Transient(err):
		return reasonPending
	case errors.Is(err, symbolication.ErrNoArtifact):
		return reasonNoArtifact
	case errors.Is(err, symbolication.ErrNoMatch):
		return reasonNoMatch
	}
	return reasonLoadError
}

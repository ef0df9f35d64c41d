package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
)

// The `reason` values of processor_symbolication_frames_unresolved.
const (
	reasonNoArtifact = "no_artifact"
	reasonNoMatch    = "no_match"
	reasonLoadError  = "load_error"
	// reasonPending: the artifact was being scanned for, loaded or
	// fetched when the batch's wait ended; a later batch resolves it.
	reasonPending = "pending"
)

func kindAttrs(kind symbolication.Kind) attribute.Set {
	return attribute.NewSet(attribute.String("kind", string(kind)))
}

// outcomeCounts sums a batch's outcomes, recorded once at its end.
type outcomeCounts struct {
	hits, misses map[symbolication.Kind]int64
	resolved     map[symbolication.Kind]int64
	unresolved   map[[2]string]int64 // kind, reason
}

func (c *outcomeCounts) add(kind symbolication.Kind, hit bool, err error) {
	if hit {
		count(&c.hits, kind)
	} else {
		count(&c.misses, kind)
	}
	if err == nil {
		count(&c.resolved, kind)
		return
	}
	count(&c.unresolved, [2]string{string(kind), reasonOf(err)})
}

// count adds one to m[k], making m on its first count: most batches
// count few of the keys.
func count[K comparable](m *map[K]int64, k K) {
	if *m == nil {
		*m = map[K]int64{}
	}
	(*m)[k]++
}

func (c *outcomeCounts) record(ctx context.Context, tb *metadata.TelemetryBuilder) {
	for kind, n := range c.hits {
		tb.ProcessorSymbolicationFrameCacheHits.Add(ctx, n, metric.WithAttributeSet(kindAttrs(kind)))
	}
	for kind, n := range c.misses {
		tb.ProcessorSymbolicationFrameCacheMisses.Add(ctx, n, metric.WithAttributeSet(kindAttrs(kind)))
	}
	for kind, n := range c.resolved {
		tb.ProcessorSymbolicationFramesResolved.Add(ctx, n, metric.WithAttributeSet(kindAttrs(kind)))
	}
	c.recordUnresolved(ctx, tb)
}

// recordUnresolved records the unresolved frames by kind and reason, and
// the load errors among them by kind.
func (c *outcomeCounts) recordUnresolved(ctx context.Context, tb *metadata.TelemetryBuilder) {
	for k, n := range c.unresolved {
		tb.ProcessorSymbolicationFramesUnresolved.Add(ctx, n, metric.WithAttributeSet(
			attribute.NewSet(attribute.String("kind", k[0]), attribute.String("reason", k[1]))))
		if k[1] == reasonLoadError {
			tb.ProcessorSymbolicationArtifactLoadErrors.Add(ctx, n, metric.WithAttributeSet(
				attribute.NewSet(attribute.String("kind", k[0]))))
		}
	}
}

// registerCacheTelemetry reports the caches' counters when the meter
// reads them: every kind's cache of parsed artifacts, and the cache of
// resolved frames.
func (s *frameProcessor) registerCacheTelemetry() error {
	tb := s.telemetry
	return errors.Join(
		tb.RegisterProcessorSymbolicationArtifactCacheHitsCallback(s.observeArtifactCaches(func(st symbolication.CacheStats) int64 { return st.Hits })),
		tb.RegisterProcessorSymbolicationArtifactCacheMissesCallback(s.observeArtifactCaches(func(st symbolication.CacheStats) int64 { return st.Misses })),
		tb.RegisterProcessorSymbolicationArtifactCacheEvictionsCallback(s.observeArtifactCaches(func(st symbolication.CacheStats) int64 { return st.Evictions })),
		tb.RegisterProcessorSymbolicationFrameCacheEvictionsCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(s.frames.Stats().Evictions)
			return nil
		}),
	)
}

// observeArtifactCaches observes one counter of each kind's cache.
func (s *frameProcessor) observeArtifactCaches(counter func(symbolication.CacheStats) int64) metric.Int64Callback {
	return func(_ context.Context, o metric.Int64Observer) error {
		for kind, r := range s.resolvers {
			if c, ok := r.(cachedResolver); ok {
				o.Observe(counter(c.CacheStats()), metric.WithAttributeSet(kindAttrs(kind)))
			}
		}
		return nil
	}
}

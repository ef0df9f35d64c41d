package symbolicationprocessor

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadatatest"
)

// blockingResolver answers its first call only when the caller's context
// ends (as a resolver waiting for a scan or a fetch does), and every
// later call at once.
type blockingResolver struct {
	calls   atomic.Int32
	started chan struct{}
}

func (b *blockingResolver) Resolve(ctx context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	if b.calls.Add(1) == 1 {
		close(b.started)
		<-ctx.Done()
		return nil, fmt.Errorf("waiting for %s: %w", in.Frame.File, ctx.Err())
	}
	return []symbolication.Frame{{Function: "original", File: "src/app.ts", Line: 3}}, nil
}

// TestFrameCacheCanceledFirstRequest: the first request for a frame is
// canceled while its resolver works (its batch hit max_batch_wait, or the
// collector shut it down); batches that were waiting for the same frame,
// and later ones, resolve it. Before, the frame cache handed the first
// request's "context canceled" to the waiting batches.
func TestFrameCacheCanceledFirstRequest(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	fake := &blockingResolver{started: make(chan struct{})}
	s.resolvers[symbolication.KindSourceMap] = fake
	in := symbolication.Lookup{Frame: symbolication.Frame{Function: "a", File: "https://example.com/app.min.js", Line: 1, Column: 10}}

	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, _, err := s.resolve(first, symbolication.KindSourceMap, in)
		firstErr <- err
	}()
	<-fake.started
	type result struct {
		answer []symbolication.Frame
		err    error
	}
	waiting := make(chan result, 2)
	for range cap(waiting) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			answer, _, err := s.resolve(ctx, symbolication.KindSourceMap, in)
			waiting <- result{answer, err}
		}()
	}
	time.Sleep(50 * time.Millisecond) // the other batches wait for the first one's answer
	cancel()
	err = <-firstErr
	require.Error(t, err)
	assert.Equal(t, reasonPending, reasonOf(err), "the canceled request's frame is pending, not a load error")
	for range cap(waiting) {
		r := <-waiting
		require.NoError(t, r.err, "a waiting batch is not answered with another's cancellation")
		assert.Equal(t, "original", r.answer[0].Function)
	}
	answer, hit, err := s.resolve(context.Background(), symbolication.KindSourceMap, in)
	require.NoError(t, err, "the cancellation is not remembered")
	assert.True(t, hit)
	assert.Equal(t, "original", answer[0].Function)
}

// TestProcessorReportsCacheCounters: the hits, misses and evictions of the
// resolved-frame cache and of each kind's artifact cache are exported.
func TestProcessorReportsCacheCounters(t *testing.T) {
	b := readBuild(t)
	var frames []string
	for _, snippet := range []string{"(t){let e=0;for(let r=2", "(t){for(let e=2;e*e", "t=>{let e=0;for(let r=0", "(e){return e*2}"} {
		line, col, name := b.v8(t, snippet)
		frames = append(frames, frameJSON(name, "/srv/app/dist/app.min.js", line, col))
	}
	chunk := nodeChunk(frames, "")
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir}
	p, err := NewFactory().CreateProfiles(context.Background(), metadatatest.NewSettings(tel), cfg, new(consumertest.ProfilesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	require.NoError(t, p.ConsumeProfiles(context.Background(), toProfiles(t, chunk)))
	require.NoError(t, p.ConsumeProfiles(context.Background(), toProfiles(t, chunk)))

	kind := attribute.NewSet(attribute.String("kind", "sourcemap"))
	points := func(v int64) []metricdata.DataPoint[int64] {
		return []metricdata.DataPoint[int64]{{Value: v, Attributes: kind}}
	}
	// First batch: four frames asked of the resolver, which parses the
	// map once; second batch: the four frames from the frame cache.
	metadatatest.AssertEqualProcessorSymbolicationFrameCacheMisses(t, tel, points(4), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationFrameCacheHits(t, tel, points(4), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationArtifactCacheMisses(t, tel, points(1), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationArtifactCacheHits(t, tel, points(3), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationArtifactCacheEvictions(t, tel, points(0), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationFrameCacheEvictions(t, tel, []metricdata.DataPoint[int64]{{Value: 0}}, metricdatatest.IgnoreTimestamp())
}

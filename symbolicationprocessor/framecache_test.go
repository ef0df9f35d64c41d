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

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
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

package linkhold

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// sink records the chunks released and the ctx error they came with.
type sink struct {
	mu       sync.Mutex
	payloads []string
	ctxErrs  []error
}

func (s *sink) release(ctx context.Context, c Chunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.payloads = append(s.payloads, string(c.Item.Payload))
	s.ctxErrs = append(s.ctxErrs, ctx.Err())
}

func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.payloads...)
}

func chunk(payload string) *envelope.Item {
	return &envelope.Item{Header: envelope.ItemHeader{Type: "profile_chunk"}, Payload: []byte(payload)}
}

func TestHoldReleasesInOrderAfterTheWait(t *testing.T) {
	h := New(Limits{Wait: 20 * time.Millisecond, MaxChunks: 10, MaxBytes: 1 << 20})
	var s sink
	h.Start(s.release)
	defer h.Shutdown(context.Background())
	item := chunk("a")
	require.True(t, h.Add(item, "42", "sentry.python", ""))
	item.Payload[0] = 'x' // the envelope's memory is reused: the hold kept a copy
	require.True(t, h.Add(chunk("b"), "42", "sentry.python", ""))
	assert.Empty(t, s.got(), "nothing is released before its wait")
	require.Eventually(t, func() bool { return len(s.got()) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{"a", "b"}, s.got())
}

func TestHoldBounds(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		items  []*envelope.Item
		want   []bool
	}{
		{"chunk count", Limits{Wait: time.Hour, MaxChunks: 2, MaxBytes: 1 << 20},
			[]*envelope.Item{chunk("a"), chunk("b"), chunk("c")}, []bool{true, true, false}},
		{"bytes", Limits{Wait: time.Hour, MaxChunks: 10, MaxBytes: 3},
			[]*envelope.Item{chunk("ab"), chunk("cd"), chunk("e")}, []bool{true, false, true}},
		{"oversized item", Limits{Wait: time.Hour, MaxChunks: 10, MaxBytes: 10},
			[]*envelope.Item{{Oversized: true}}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(tt.limits)
			var s sink
			h.Start(s.release)
			for i, item := range tt.items {
				assert.Equal(t, tt.want[i], h.Add(item, "42", "", ""), "item %d", i)
			}
			h.Shutdown(context.Background())
		})
	}
}

// TestHoldLifecycle: nothing is held before Start or after Shutdown;
// Shutdown hands every chunk still held to the consumer Start was given,
// once, with the shutdown's ctx.
func TestHoldLifecycle(t *testing.T) {
	h := New(Limits{Wait: time.Hour, MaxChunks: 10, MaxBytes: 1 << 20})
	assert.False(t, h.Add(chunk("early"), "42", "", ""), "not started")
	var s sink
	h.Start(s.release)
	h.Start(func(context.Context, Chunk) { t.Error("a second Start replaced the consumer") })
	require.True(t, h.Add(chunk("a"), "42", "", ""))
	require.True(t, h.Add(chunk("b"), "42", "", ""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.Shutdown(ctx)
	assert.Equal(t, []string{"a", "b"}, s.got(), "flushed on shutdown, before their wait")
	assert.Equal(t, []error{context.Canceled, context.Canceled}, s.ctxErrs, "with the shutdown's ctx")
	assert.False(t, h.Add(chunk("late"), "42", "", ""), "stopped")
	h.Shutdown(context.Background())
	h.Start(s.release)
	assert.False(t, h.Add(chunk("restarted"), "42", "", ""), "a Hold does not start again")
	assert.Len(t, s.got(), 2, "released once")
}

func TestNoWaitNoHold(t *testing.T) {
	h := New(Limits{Wait: 0, MaxChunks: 10, MaxBytes: 10})
	require.Nil(t, h)
	h.Start(func(context.Context, Chunk) {})
	assert.False(t, h.Add(chunk("a"), "42", "", ""))
	h.Shutdown(context.Background())
}

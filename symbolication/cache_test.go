package symbolication

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheEvictsLeastRecentlyUsedByBytes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		maxBytes  int64
		adds      []string // keys, each of size 10
		touch     string   // key read again before the last add
		wantKept  []string
		wantEvict int64
	}{
		{name: "fits", maxBytes: 30, adds: []string{"a", "b", "c"}, wantKept: []string{"a", "b", "c"}},
		{name: "oldest goes", maxBytes: 30, adds: []string{"a", "b", "c", "d"}, wantKept: []string{"b", "c", "d"}, wantEvict: 1},
		{name: "touched stays", maxBytes: 30, adds: []string{"a", "b", "c", "d"}, touch: "a", wantKept: []string{"a", "c", "d"}, wantEvict: 1},
		{name: "two go for one", maxBytes: 25, adds: []string{"a", "b", "c"}, wantKept: []string{"b", "c"}, wantEvict: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache[string, string](CacheOptions{MaxBytes: tt.maxBytes})
			for i, k := range tt.adds {
				if i == len(tt.adds)-1 && tt.touch != "" {
					_, _ = c.Get(ctx, tt.touch, func(context.Context) (string, int64, error) { t.Fatal("touched key reloaded"); return "", 0, nil })
				}
				_, err := c.Get(ctx, k, func(context.Context) (string, int64, error) { return "v" + k, 10, nil })
				require.NoError(t, err)
			}
			for _, k := range tt.wantKept {
				loaded := false
				v, _ := c.Get(ctx, k, func(context.Context) (string, int64, error) { loaded = true; return "", 1, nil })
				assert.False(t, loaded, "key %s was evicted", k)
				assert.Equal(t, "v"+k, v)
			}
			s := c.Stats()
			assert.Equal(t, tt.wantEvict, s.Evictions)
			assert.LessOrEqual(t, s.Bytes, tt.maxBytes)
		})
	}
}

func TestCacheRemembersErrorsAndSkipsOversized(t *testing.T) {
	ctx := context.Background()
	c := NewCache[string, int](CacheOptions{MaxBytes: 1000, Retry: RetryAll(time.Hour)})
	boom := errors.New("boom")
	loads := 0
	for range 3 {
		_, err := c.Get(ctx, "bad", func(context.Context) (int, int64, error) { loads++; return 0, 0, boom })
		assert.ErrorIs(t, err, boom)
	}
	assert.Equal(t, 1, loads, "a failed load is remembered")

	loads = 0
	for range 2 {
		v, err := c.Get(ctx, "huge", func(context.Context) (int, int64, error) { loads++; return 7, 5000, nil })
		require.NoError(t, err)
		assert.Equal(t, 7, v)
	}
	assert.Equal(t, 2, loads, "an entry over the bound is not kept")
	assert.Equal(t, int64(errorEntryBytes), c.Stats().Bytes)
}

func TestCacheLoadsOnceUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	c := NewCache[int, string](CacheOptions{MaxBytes: 1 << 20})
	var mu sync.Mutex
	loads := map[int]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				v, err := c.Get(ctx, k, func(context.Context) (string, int64, error) {
					mu.Lock()
					loads[k]++
					mu.Unlock()
					return fmt.Sprint(k), 8, nil
				})
				if err != nil || v != fmt.Sprint(k) {
					t.Errorf("goroutine %d key %d: %q %v", g, k, v, err)
				}
			}
		}()
	}
	wg.Wait()
	for k, n := range loads {
		assert.Equal(t, 1, n, "key %d loaded %d times", k, n)
	}
	s := c.Stats()
	assert.Equal(t, int64(8), s.Misses)
	assert.Equal(t, int64(16*8-8), s.Hits)
}

// TestCacheRetryTimes: each failure is remembered for its own retry time,
// then loaded again.
func TestCacheRetryTimes(t *testing.T) {
	retry := RetryAfter{NotFound: time.Hour, Malformed: 10 * time.Millisecond, Timeout: 0, Fetch: time.Hour}
	tests := []struct {
		name      string
		err       error
		wantLoads int
	}{
		{name: "not found, within its retry time", err: fmt.Errorf("map: %w", ErrNoArtifact), wantLoads: 1},
		{name: "no match, within its retry time", err: fmt.Errorf("map: %w", ErrNoMatch), wantLoads: 1},
		{name: "malformed, after its retry time", err: fmt.Errorf("parse: %w", ErrMalformed), wantLoads: 2},
		{name: "timeout, never remembered", err: fmt.Errorf("fetch: %w", ErrTimeout), wantLoads: 2},
		{name: "own deadline is a timeout", err: fmt.Errorf("fetch: %w", context.DeadlineExceeded), wantLoads: 2},
		{name: "fetch error, within its retry time", err: errors.New("connection refused"), wantLoads: 1},
		{name: "pending, never remembered", err: fmt.Errorf("fetching: %w", ErrPending), wantLoads: 2},
		{name: "canceled, never remembered", err: context.Canceled, wantLoads: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache[string, int](CacheOptions{MaxBytes: 1 << 10, Retry: retry})
			loads := 0
			load := func(context.Context) (int, int64, error) { loads++; return 0, 0, tt.err }
			_, err := c.Get(context.Background(), "k", load)
			require.ErrorIs(t, err, tt.err)
			time.Sleep(20 * time.Millisecond)
			_, err = c.Get(context.Background(), "k", load)
			require.ErrorIs(t, err, tt.err)
			assert.Equal(t, tt.wantLoads, loads)
			assert.LessOrEqual(t, c.Stats().Bytes, int64(errorEntryBytes), "an expired entry is replaced, not added")
		})
	}
}

func TestFailureOf(t *testing.T) {
	tests := []struct {
		err  error
		want Failure
	}{
		{nil, FailureNone},
		{fmt.Errorf("x: %w", ErrPending), FailurePending},
		{fmt.Errorf("x: %w", context.Canceled), FailurePending},
		{fmt.Errorf("x: %w", ErrTimeout), FailureTimeout},
		{&net.DNSError{IsTimeout: true}, FailureTimeout},
		{fmt.Errorf("x: %w", ErrNoArtifact), FailureNotFound},
		{fmt.Errorf("x: %w", ErrNoMatch), FailureNotFound},
		{fmt.Errorf("x: %w", ErrMalformed), FailureMalformed},
		{fmt.Errorf("x: %w", ErrFetch), FailureFetch},
		{errors.New("permission denied"), FailureFetch},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, FailureOf(tt.err), "%v", tt.err)
	}
}

// TestCacheCanceledLoaderDoesNotAnswerOthers: the first caller's context
// ends while it loads; the callers waiting for that load with time left
// load the key themselves and get its value, and nothing is remembered.
// Before, the waiters got the first caller's "context canceled".
func TestCacheCanceledLoaderDoesNotAnswerOthers(t *testing.T) {
	c := NewCache[string, string](CacheOptions{MaxBytes: 1 << 10, Retry: RetryAll(time.Minute)})
	started := make(chan struct{})
	first, cancel := context.WithCancel(context.Background())
	var loads atomic.Int32
	load := func(ctx context.Context) (string, int64, error) {
		if loads.Add(1) == 1 {
			close(started)
			<-ctx.Done()
			return "", 0, fmt.Errorf("fetching: %w", ctx.Err())
		}
		return "value", 5, nil
	}
	firstErr := make(chan error, 1)
	go func() {
		_, err := c.Get(first, "k", load)
		firstErr <- err
	}()
	<-started
	waiters := make(chan string, 3)
	for range cap(waiters) {
		go func() {
			v, err := c.Get(context.Background(), "k", load)
			if err != nil {
				v = err.Error()
			}
			waiters <- v
		}()
	}
	time.Sleep(20 * time.Millisecond) // the waiters join the first load
	cancel()
	require.ErrorIs(t, <-firstErr, context.Canceled)
	for range cap(waiters) {
		assert.Equal(t, "value", <-waiters)
	}
	assert.Equal(t, int32(2), loads.Load(), "one waiter loads again, the others share its load")
	v, err := c.Get(context.Background(), "k", load)
	require.NoError(t, err)
	assert.Equal(t, "value", v)
}

// TestCacheBackgroundLoads: a background load outlives a caller that gave
// up on it (ErrPending), is found by the next caller, is bounded by
// MaxLoads, and Close stops it.
func TestCacheBackgroundLoads(t *testing.T) {
	release := make(chan struct{})
	c := NewCache[string, string](CacheOptions{MaxBytes: 1 << 10, Background: true, MaxLoads: 1, Retry: RetryAll(time.Minute)})
	defer c.Close()
	slow := func(ctx context.Context) (string, int64, error) {
		select {
		case <-release:
			return "slow", 4, nil
		case <-ctx.Done():
			return "", 0, ctx.Err()
		}
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Get(short, "a", slow)
	require.ErrorIs(t, err, ErrPending)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, c.Holds("a"), "the load goes on")

	_, err = c.Get(context.Background(), "b", slow)
	require.ErrorIs(t, err, ErrPending, "MaxLoads loads under way: b is not started")
	assert.False(t, c.Holds("b"))

	close(release)
	v, err := c.Get(context.Background(), "a", slow)
	require.NoError(t, err)
	assert.Equal(t, "slow", v)
	assert.Equal(t, CacheStats{Hits: 1, Misses: 1, Bytes: 4, Entries: 1}, c.Stats())

	stopped := NewCache[string, string](CacheOptions{MaxBytes: 1 << 10, Background: true, Retry: RetryAll(time.Minute)})
	block := func(ctx context.Context) (string, int64, error) { <-ctx.Done(); return "", 0, ctx.Err() }
	stopped.Prefetch("k", block)
	require.True(t, stopped.Holds("k"))
	stopped.Close()
	_, err = stopped.Get(context.Background(), "k", block)
	require.ErrorIs(t, err, ErrPending, "nothing loads after Close")
}

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
			c := newTestCache[string, string](CacheOptions{MaxBytes: tt.maxBytes})
			for i, k := range tt.adds {
				if i == len(tt.adds)-1 && tt.touch != "" {
					_, _ = c.getWith(ctx, tt.touch, func(context.Context) (string, int64, error) { t.Fatal("touched key reloaded"); return "", 0, nil })
				}
				_, err := c.getWith(ctx, k, func(context.Context) (string, int64, error) { return "v" + k, 10, nil })
				require.NoError(t, err)
			}
			for _, k := range tt.wantKept {
				loaded := false
				v, _ := c.getWith(ctx, k, func(context.Context) (string, int64, error) { loaded = true; return "", 1, nil })
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
	c := newTestCache[string, int](CacheOptions{MaxBytes: 1000, Retry: RetryAll(time.Hour)})
	boom := errors.New("boom")
	loads := 0
	for range 3 {
		_, err := c.getWith(ctx, "bad", func(context.Context) (int, int64, error) { loads++; return 0, 0, boom })
		assert.ErrorIs(t, err, boom)
	}
	assert.Equal(t, 1, loads, "a failed load is remembered")

	loads = 0
	for range 2 {
		v, err := c.getWith(ctx, "huge", func(context.Context) (int, int64, error) { loads++; return 7, 5000, nil })
		require.NoError(t, err)
		assert.Equal(t, 7, v)
	}
	assert.Equal(t, 2, loads, "an entry over the bound is not kept")
	assert.Equal(t, int64(errorEntryBytes), c.Stats().Bytes)
}

func TestCacheLoadsOnceUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	c := newTestCache[int, string](CacheOptions{MaxBytes: 1 << 20})
	var mu sync.Mutex
	loads := map[int]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				v, err := c.getWith(ctx, k, func(context.Context) (string, int64, error) {
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
			c := newTestCache[string, int](CacheOptions{MaxBytes: 1 << 10, Retry: retry})
			loads := 0
			load := func(context.Context) (int, int64, error) { loads++; return 0, 0, tt.err }
			_, err := c.getWith(context.Background(), "k", load)
			require.ErrorIs(t, err, tt.err)
			time.Sleep(20 * time.Millisecond)
			_, err = c.getWith(context.Background(), "k", load)
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
	c := newTestCache[string, string](CacheOptions{MaxBytes: 1 << 10, Retry: RetryAll(time.Minute)})
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
		_, err := c.getWith(first, "k", load)
		firstErr <- err
	}()
	<-started
	waiters := make(chan string, 3)
	for range cap(waiters) {
		go func() {
			v, err := c.getWith(context.Background(), "k", load)
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
	v, err := c.getWith(context.Background(), "k", load)
	require.NoError(t, err)
	assert.Equal(t, "value", v)
}

// TestCacheBackgroundLoads: a background load outlives a caller that gave
// up on it (ErrPending), is found by the next caller, is bounded by
// MaxLoads, and Close stops it.
func TestCacheBackgroundLoads(t *testing.T) {
	release := make(chan struct{})
	c := newTestCache[string, string](CacheOptions{MaxBytes: 1 << 10, Background: true, MaxLoads: 1, Retry: RetryAll(time.Minute)})
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
	_, err := c.getWith(short, "a", slow)
	require.ErrorIs(t, err, ErrPending)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, c.Holds("a"), "the load goes on")

	_, err = c.getWith(context.Background(), "b", slow)
	require.ErrorIs(t, err, ErrPending, "MaxLoads loads under way: b is not started")
	assert.False(t, c.Holds("b"))

	close(release)
	v, err := c.getWith(context.Background(), "a", slow)
	require.NoError(t, err)
	assert.Equal(t, "slow", v)
	assert.Equal(t, CacheStats{Hits: 1, Misses: 1, Bytes: 4, Entries: 1}, c.Stats())

	stopped := newTestCache[string, string](CacheOptions{MaxBytes: 1 << 10, Background: true, Retry: RetryAll(time.Minute)})
	block := func(ctx context.Context) (string, int64, error) { <-ctx.Done(); return "", 0, ctx.Err() }
	stopped.prefetchWith("k", block)
	require.True(t, stopped.Holds("k"))
	stopped.Close()
	_, err = stopped.getWith(context.Background(), "k", block)
	require.ErrorIs(t, err, ErrPending, "nothing loads after Close")
}

// testCache lets each Get of a test say how its key loads: the cache's
// LoadFunc calls the function the last Get of the key gave.
type testCache[K comparable, V any] struct {
	*Cache[K, V]
	mu    sync.Mutex
	loads map[K]func(context.Context) (V, int64, error)
}

func newTestCache[K comparable, V any](opts CacheOptions) *testCache[K, V] {
	c := &testCache[K, V]{loads: map[K]func(context.Context) (V, int64, error){}}
	c.Cache = NewCache(opts, func(ctx context.Context, key K) (V, int64, error) {
		c.mu.Lock()
		f := c.loads[key]
		c.mu.Unlock()
		return f(ctx)
	})
	return c
}

func (c *testCache[K, V]) setLoad(key K, f func(context.Context) (V, int64, error)) {
	c.mu.Lock()
	c.loads[key] = f
	c.mu.Unlock()
}

func (c *testCache[K, V]) getWith(ctx context.Context, key K, f func(context.Context) (V, int64, error)) (V, error) {
	c.setLoad(key, f)
	return c.Get(ctx, key)
}

func (c *testCache[K, V]) prefetchWith(key K, f func(context.Context) (V, int64, error)) {
	c.setLoad(key, f)
	c.Prefetch(key)
}

// TestCacheGetCountedSaysHits: a Get that starts the load is a miss, one
// answered by an entry or another caller's load a hit.
func TestCacheGetCountedSaysHits(t *testing.T) {
	loads := 0
	c := NewCache(CacheOptions{MaxBytes: 1 << 10}, func(_ context.Context, key string) (string, int64, error) {
		loads++
		return key, 1, nil
	})
	for i, wantHit := range []bool{false, true, true} {
		v, hit, err := c.GetCounted(context.Background(), "k")
		require.NoError(t, err)
		assert.Equal(t, "k", v)
		assert.Equal(t, wantHit, hit, "call %d", i)
	}
	assert.Equal(t, 1, loads)
}

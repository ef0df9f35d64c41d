package symbolication

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheEvictsLeastRecentlyUsedByBytes(t *testing.T) {
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
			c := NewCache[string, string](tt.maxBytes)
			for i, k := range tt.adds {
				if i == len(tt.adds)-1 && tt.touch != "" {
					_, _ = c.Get(tt.touch, func() (string, int64, error) { t.Fatal("touched key reloaded"); return "", 0, nil })
				}
				_, err := c.Get(k, func() (string, int64, error) { return "v" + k, 10, nil })
				require.NoError(t, err)
			}
			for _, k := range tt.wantKept {
				loaded := false
				v, _ := c.Get(k, func() (string, int64, error) { loaded = true; return "", 1, nil })
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
	c := NewCache[string, int](1000)
	boom := errors.New("boom")
	loads := 0
	for range 3 {
		_, err := c.Get("bad", func() (int, int64, error) { loads++; return 0, 0, boom })
		assert.ErrorIs(t, err, boom)
	}
	assert.Equal(t, 1, loads, "a failed load is remembered")

	loads = 0
	for range 2 {
		v, err := c.Get("huge", func() (int, int64, error) { loads++; return 7, 5000, nil })
		require.NoError(t, err)
		assert.Equal(t, 7, v)
	}
	assert.Equal(t, 2, loads, "an entry over the bound is not kept")
	assert.Equal(t, int64(errorEntryBytes), c.Stats().Bytes)
}

func TestCacheLoadsOnceUnderConcurrency(t *testing.T) {
	c := NewCache[int, string](1 << 20)
	var mu sync.Mutex
	loads := map[int]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 8 {
				v, err := c.Get(k, func() (string, int64, error) {
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

func TestCacheErrorTTL(t *testing.T) {
	tests := []struct {
		name      string
		ttl       time.Duration
		wait      time.Duration
		wantLoads int
	}{
		{name: "remembered without a TTL", wait: 20 * time.Millisecond, wantLoads: 1},
		{name: "remembered within the TTL", ttl: time.Hour, wait: 20 * time.Millisecond, wantLoads: 1},
		{name: "tried again after the TTL", ttl: 10 * time.Millisecond, wait: 20 * time.Millisecond, wantLoads: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache[string, int](1 << 10).WithErrorTTL(tt.ttl)
			loads := 0
			load := func() (int, int64, error) { loads++; return 0, 0, errors.New("missing") }
			_, err := c.Get("k", load)
			require.Error(t, err)
			time.Sleep(tt.wait)
			_, err = c.Get("k", load)
			require.Error(t, err)
			assert.Equal(t, tt.wantLoads, loads)
			assert.Equal(t, int64(errorEntryBytes), c.Stats().Bytes, "the expired entry is replaced, not added")
		})
	}
}

// TestCacheForgetsTransientErrors: an artifact not ready yet (or a caller
// that gave up) is asked again on the next Get; a lasting error is kept.
func TestCacheForgetsTransientErrors(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantLoads int
	}{
		{name: "pending", err: fmt.Errorf("fetching: %w", ErrPending), wantLoads: 2},
		{name: "deadline", err: fmt.Errorf("fetching: %w", context.DeadlineExceeded), wantLoads: 2},
		{name: "canceled", err: context.Canceled, wantLoads: 2},
		{name: "not found", err: fmt.Errorf("map: %w", ErrNoArtifact), wantLoads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache[string, string](1 << 10)
			loads := 0
			for range 2 {
				_, err := c.Get("k", func() (string, int64, error) { loads++; return "", 0, tt.err })
				require.ErrorIs(t, err, tt.err)
			}
			assert.Equal(t, tt.wantLoads, loads)
		})
	}
}

package sources

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// TestScansWaitOnlyWhileTheContextAllows: a scan that does not end (a
// directory on a hung mount, before: a FIFO) answers ErrPending to a
// caller whose context ends, holds no lock meanwhile, and Close stops it.
func TestScansWaitOnlyWhileTheContextAllows(t *testing.T) {
	release := make(chan struct{})
	var builds atomic.Int32
	s := NewScans("test directories", time.Hour, func(ctx context.Context) int {
		n := builds.Add(1)
		if n == 1 {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return int(n)
	})
	defer s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Get(ctx, false)
	require.ErrorIs(t, err, symbolication.ErrPending)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, symbolication.Transient(err))

	close(release)
	got, err := s.Get(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, 1, got)
	got, err = s.Get(context.Background(), true)
	require.NoError(t, err)
	assert.Equal(t, 1, got, "within the interval no rescan")
	assert.Equal(t, int32(1), builds.Load())
}

func TestScansRescanAfterTheInterval(t *testing.T) {
	var builds atomic.Int32
	s := NewScans("test directories", 20*time.Millisecond, func(context.Context) int { return int(builds.Add(1)) })
	defer s.Close()
	tests := []struct {
		name  string
		sleep time.Duration
		fresh bool
		want  int
	}{
		{name: "first scan", want: 1},
		{name: "not fresh: the current index", sleep: 30 * time.Millisecond, want: 1},
		{name: "fresh after the interval", fresh: true, want: 2},
		{name: "fresh within the interval", fresh: true, want: 2},
	}
	for _, tt := range tests {
		time.Sleep(tt.sleep)
		got, err := s.Get(context.Background(), tt.fresh)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
}

func TestScansCloseStopsAScan(t *testing.T) {
	started := make(chan struct{})
	s := NewScans("test directories", time.Hour, func(ctx context.Context) int {
		close(started)
		<-ctx.Done()
		return 1
	})
	s.Start()
	<-started
	done := make(chan error, 1)
	go func() {
		_, err := s.Get(context.Background(), false)
		done <- err
	}()
	s.Close()
	select {
	case err := <-done:
		require.ErrorIs(t, err, symbolication.ErrPending, "an index cut short is not kept")
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the scan")
	}
	_, err := s.Get(context.Background(), false)
	require.ErrorIs(t, err, symbolication.ErrPending, "no scan starts after Close")
}

// TestFindRescansOnAMiss: a key missing from the index makes one rescan
// per interval, and is found once a scan sees it.
func TestFindRescansOnAMiss(t *testing.T) {
	var deployed atomic.Bool
	var builds atomic.Int32
	s := NewScans("test directories", 30*time.Millisecond, func(context.Context) map[string]string {
		builds.Add(1)
		if deployed.Load() {
			return map[string]string{"new": "/dir/new"}
		}
		return map[string]string{}
	})
	defer s.Close()
	lookup := func(idx map[string]string) (string, bool) { p, ok := idx["new"]; return p, ok }
	ctx := context.Background()
	_, ok, err := Find(ctx, s, lookup)
	require.NoError(t, err)
	assert.False(t, ok)
	deployed.Store(true)
	_, ok, err = Find(ctx, s, lookup)
	require.NoError(t, err)
	assert.False(t, ok, "within the interval: no rescan")
	assert.Equal(t, int32(1), builds.Load())
	time.Sleep(40 * time.Millisecond)
	p, ok, err := Find(ctx, s, lookup)
	require.NoError(t, err)
	assert.True(t, ok, "after the interval a miss rescans")
	assert.Equal(t, "/dir/new", p)
	assert.Equal(t, int32(2), builds.Load())
}

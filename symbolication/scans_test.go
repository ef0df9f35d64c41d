package symbolication

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.ErrorIs(t, err, ErrPending)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, Transient(err))

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
		require.ErrorIs(t, err, ErrPending, "an index cut short is not kept")
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the scan")
	}
	_, err := s.Get(context.Background(), false)
	require.ErrorIs(t, err, ErrPending, "no scan starts after Close")
}

package sources

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// Scans keeps the latest index of a kind's directories and makes new ones
// in the background, one at a time, at most once per interval however
// many lookups miss: the one rescan throttle of every kind (Find). A caller waits for a scan only
// while its context allows, never holding a lock meanwhile, and Close
// stops a scan under way: a slow or stuck directory never holds a frame,
// a batch or a shutdown.
//
// The zero value is not usable; call NewScans.
type Scans[T any] struct {
	build    func(ctx context.Context) T
	interval time.Duration
	what     string // what is scanned, for errors

	ctx    context.Context // ends with Close; build gets it
	cancel context.CancelFunc

	mu      sync.Mutex
	current T
	has     bool
	started time.Time // start of the scan that made current
	running chan struct{}
}

// NewScans returns Scans that make an index with build, which must stop
// soon once its context ends. A fresh index is made at most once per
// interval. what names the directories in errors.
func NewScans[T any](what string, interval time.Duration, build func(ctx context.Context) T) *Scans[T] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Scans[T]{build: build, interval: interval, what: what, ctx: ctx, cancel: cancel}
}

// Start starts a scan unless one runs, without waiting for it.
func (s *Scans[T]) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
}

// Close stops the scan under way and any later one; Get answers from the
// index it has.
func (s *Scans[T]) Close() { s.cancel() }

// Get returns the current index. Before the first scan has ended, and when
// fresh is asked and the current index is older than the interval, it
// starts a scan (unless one runs) and waits for it while ctx allows; when
// ctx ends first it returns the index it has, or, before the first, an
// error wrapping ErrPending.
func (s *Scans[T]) Get(ctx context.Context, fresh bool) (T, error) {
	s.mu.Lock()
	cur, has := s.current, s.has
	if has && (!fresh || time.Since(s.started) < s.interval) {
		s.mu.Unlock()
		return cur, nil
	}
	running := s.startLocked()
	s.mu.Unlock()
	select {
	case <-running:
		return s.latest()
	case <-ctx.Done():
		if has {
			return cur, nil
		}
		var zero T
		return zero, fmt.Errorf("%s: first scan not done: %w (%w)", s.what, symbolication.ErrPending, ctx.Err())
	}
}

// latest is the index of the scan that just ended; ErrPending when it was
// stopped before any scan completed.
func (s *Scans[T]) latest() (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.has {
		var zero T
		return zero, fmt.Errorf("%s: scan stopped: %w", s.what, symbolication.ErrPending)
	}
	return s.current, nil
}

// Current returns the index of the last completed scan, without starting
// or waiting for one; false before the first.
func (s *Scans[T]) Current() (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current, s.has
}

// startLocked starts a scan unless one runs, and returns the channel
// closed when the running scan ends; s.mu is held.
func (s *Scans[T]) startLocked() chan struct{} {
	if s.running == nil && s.ctx.Err() == nil {
		s.running = make(chan struct{})
		go s.scan(s.running)
	}
	if s.running == nil { // closed: nothing will run
		done := make(chan struct{})
		close(done)
		return done
	}
	return s.running
}

// scan makes a new index and closes done. An index cut short by Close is
// not kept.
func (s *Scans[T]) scan(done chan struct{}) {
	start := time.Now()
	idx := s.build(s.ctx)
	s.mu.Lock()
	if s.ctx.Err() == nil {
		s.current, s.has, s.started = idx, true, start
	}
	s.running = nil
	s.mu.Unlock()
	close(done)
}

// Find looks an artifact up in the current index; when it is not there
// and the index is older than the interval, it scans again (waiting while
// ctx allows) and looks once more, so that an artifact deployed while the
// collector runs is found. The error is the first scan's ErrPending; a
// miss is (zero, false, nil).
func Find[T, R any](ctx context.Context, s *Scans[T], lookup func(T) (R, bool)) (R, bool, error) {
	var zero R
	idx, err := s.Get(ctx, false)
	if err != nil {
		return zero, false, err
	}
	if r, ok := lookup(idx); ok {
		return r, true, nil
	}
	if idx, err = s.Get(ctx, true); err != nil {
		return zero, false, nil //nolint:nilerr // the rescan did not end in time: a miss in the index there is
	}
	r, ok := lookup(idx)
	return r, ok, nil
}

package symbolication

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Cache holds what loading a key made (a parsed artifact, a resolved
// frame) bounded by the sum of the entries' sizes in bytes: adding past
// the bound evicts the least recently used entries. Every kind of
// artifact, and the processor's resolved frames, are cached by it.
//
// Each key is loaded once however many goroutines ask for it at the same
// time. A failed load is remembered as long as its Failure's retry time
// (RetryAfter), so that a missing or broken artifact is not read again for
// every frame, and is tried again afterwards, so that one deployed or
// fixed later is found. A load that failed because the context it ran
// under ended says nothing about the key: it is not remembered, and the
// callers that were waiting for it with time left load it again.
//
// By default a load runs in the goroutine of the caller that started it,
// under that caller's context. With CacheOptions.Background it runs in a
// goroutine of its own under the cache's context (ended by Close): callers
// wait for it while their context allows, then get ErrPending, and the
// load goes on for the next caller.
//
// The zero value is not usable; call NewCache.
type Cache[K comparable, V any] struct {
	opts CacheOptions
	load LoadFunc[K, V]
	// ctx is the background loads' context; Close ends it.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	used     int64
	order    *list.List // of *cacheEntry[K, V], most recent first
	entries  map[K]*list.Element
	inflight map[K]*cacheLoad[V]
	// background counts the loads under way in their own goroutines.
	background int

	hits, misses, evictions atomic.Int64
}

// CacheOptions configure a Cache.
type CacheOptions struct {
	// MaxBytes bounds the sum of the entries' sizes. An entry larger than
	// the whole bound is returned to its caller but not kept.
	MaxBytes int64
	// Retry is how long each kind of failure is remembered.
	Retry RetryAfter
	// Background runs each load in a goroutine of its own, under the
	// cache's context, so that it outlives the callers that gave up on it.
	Background bool
	// MaxLoads bounds the background loads under way (default 64): past
	// it, Get answers ErrPending for a key not loading yet, without
	// starting it.
	MaxLoads int
}

// RetryAfter is how long a cache remembers a failed load of each Failure
// before it loads the key again; 0 is not at all.
type RetryAfter struct {
	// NotFound: no artifact (ErrNoArtifact), or nothing at a position
	// (ErrNoMatch).
	NotFound time.Duration
	// Malformed: an artifact that could not be parsed (ErrMalformed).
	Malformed time.Duration
	// Timeout: a fetch that took too long (ErrTimeout).
	Timeout time.Duration
	// Fetch: an artifact that could not be read or fetched (ErrFetch and
	// any other error).
	Fetch time.Duration
}

// RetryAll remembers every failure for d.
func RetryAll(d time.Duration) RetryAfter {
	return RetryAfter{NotFound: d, Malformed: d, Timeout: d, Fetch: d}
}

// of is the retry time of a failure; 0 for one never remembered.
func (r RetryAfter) of(f Failure) time.Duration {
	switch f {
	case FailureNotFound:
		return r.NotFound
	case FailureMalformed:
		return r.Malformed
	case FailureTimeout:
		return r.Timeout
	case FailureFetch:
		return r.Fetch
	}
	return 0
}

// LoadFunc makes the value of a key: the value, its size in bytes, or the
// error that says why it could not (wrapping one of Resolve's sentinel
// errors). It must stop soon once ctx ends. A cache has one, given when it
// is made, so that a Get costs no closure.
type LoadFunc[K comparable, V any] func(ctx context.Context, key K) (V, int64, error)

// errorEntryBytes is what a remembered load failure counts for.
const errorEntryBytes = 256

const defaultMaxLoads = 64

type cacheEntry[K comparable, V any] struct {
	key   K
	value V
	err   error
	size  int64
	// expires is when a failed load is tried again (zero: never).
	expires time.Time
}

// cacheLoad is one load under way, shared by the callers that wait for it.
type cacheLoad[V any] struct {
	done  chan struct{}
	value V
	err   error
	// abandoned: the load's context ended before it did; its error says
	// nothing about the key.
	abandoned bool
}

// NewCache returns an empty cache whose values load makes.
func NewCache[K comparable, V any](opts CacheOptions, load LoadFunc[K, V]) *Cache[K, V] {
	if opts.MaxLoads <= 0 {
		opts.MaxLoads = defaultMaxLoads
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache[K, V]{
		opts:     opts,
		load:     load,
		ctx:      ctx,
		cancel:   cancel,
		order:    list.New(),
		entries:  map[K]*list.Element{},
		inflight: map[K]*cacheLoad[V]{},
	}
}

// Close stops the background loads under way and drops every entry; a
// Get after Close loads nothing in the background.
func (c *Cache[K, V]) Close() {
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.entries)
	c.used = 0
}

// Get returns the value of key, or its remembered error, loading it when
// it is absent. A caller whose context ends while the load runs elsewhere
// gets an error wrapping ErrPending and its context's error.
func (c *Cache[K, V]) Get(ctx context.Context, key K) (V, error) {
	value, _, err := c.GetCounted(ctx, key)
	return value, err
}

// GetCounted is Get, and says whether the answer was a hit: an entry, or
// a load another caller started.
func (c *Cache[K, V]) GetCounted(ctx context.Context, key K) (value V, hit bool, err error) {
	for {
		step := c.begin(key)
		if step.answered {
			return step.value, step.hit, step.err
		}
		if step.owner {
			c.run(ctx, key, step.call)
		}
		if value, err, again := c.wait(ctx, step.call); !again {
			return value, step.hit, err
		}
	}
}

// Prefetch starts loading key in the background when it is neither held
// nor loading, and does not wait: a caller with many keys prefetches all
// of them first, so that they load concurrently. It does nothing in a
// cache without Background loads.
func (c *Cache[K, V]) Prefetch(key K) {
	if c.opts.Background {
		c.begin(key)
	}
}

// Holds reports whether key has an entry not expired, or is loading.
func (c *Cache[K, V]) Holds(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, loading := c.inflight[key]; loading {
		return true
	}
	_, ok := c.fresh(key)
	return ok
}

// cacheStep is what begin found: an answer, a load to wait for, or a load
// for the caller to run (owner). hit: an entry, or another caller's load.
type cacheStep[V any] struct {
	answered bool
	value    V
	err      error
	call     *cacheLoad[V]
	owner    bool
	hit      bool
}

// begin answers key from an entry, joins the load under way, or starts
// one: in the background, or for the caller to run.
func (c *Cache[K, V]) begin(key K) cacheStep[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.fresh(key); ok {
		c.hits.Add(1)
		return cacheStep[V]{answered: true, value: e.value, err: e.err, hit: true}
	}
	if l, ok := c.inflight[key]; ok {
		c.hits.Add(1)
		return cacheStep[V]{call: l, hit: true}
	}
	if !c.opts.Background {
		return c.startInline(key)
	}
	return c.startBackground(key)
}

// startInline registers a load the caller runs; c.mu is held.
func (c *Cache[K, V]) startInline(key K) cacheStep[V] {
	c.misses.Add(1)
	l := &cacheLoad[V]{done: make(chan struct{})}
	c.inflight[key] = l
	return cacheStep[V]{call: l, owner: true}
}

// startBackground starts a load in its own goroutine unless MaxLoads run
// or the cache is closed; c.mu is held.
func (c *Cache[K, V]) startBackground(key K) cacheStep[V] {
	if c.ctx.Err() != nil {
		return cacheStep[V]{answered: true, err: fmt.Errorf("cache closed: %w", ErrPending)}
	}
	if c.background >= c.opts.MaxLoads {
		return cacheStep[V]{answered: true, err: fmt.Errorf("%d loads under way: %w", c.background, ErrPending)}
	}
	c.misses.Add(1)
	c.background++
	l := &cacheLoad[V]{done: make(chan struct{})}
	c.inflight[key] = l
	go c.run(c.ctx, key, l)
	return cacheStep[V]{call: l}
}

// fresh returns the entry of key unless it expired (an expired one is
// dropped); c.mu is held.
func (c *Cache[K, V]) fresh(key K) (*cacheEntry[K, V], bool) {
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry[K, V])
	if !e.expires.IsZero() && !time.Now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e, true
}

// run loads key under ctx and publishes the result to the load's waiters
// and, unless the load was abandoned or its failure is not remembered, to
// the cache.
func (c *Cache[K, V]) run(ctx context.Context, key K, l *cacheLoad[V]) {
	value, size, err := c.load(ctx, key)
	l.value, l.err = value, err
	l.abandoned = err != nil && ctx.Err() != nil
	c.mu.Lock()
	delete(c.inflight, key)
	if c.opts.Background {
		c.background--
	}
	if e, keep := c.entryOf(key, value, size, err, l.abandoned); keep {
		c.insert(e)
	}
	c.mu.Unlock()
	close(l.done)
}

// entryOf is the entry a load makes, and whether it is kept.
func (c *Cache[K, V]) entryOf(key K, value V, size int64, err error, abandoned bool) (*cacheEntry[K, V], bool) {
	if err == nil {
		return &cacheEntry[K, V]{key: key, value: value, size: size}, true
	}
	retry := c.opts.Retry.of(FailureOf(err))
	if abandoned || retry <= 0 {
		return nil, false
	}
	return &cacheEntry[K, V]{key: key, err: err, size: errorEntryBytes, expires: time.Now().Add(retry)}, true
}

// wait waits for a load while ctx allows. again says the load was
// abandoned by a context that was not the caller's, which loads it anew.
func (c *Cache[K, V]) wait(ctx context.Context, l *cacheLoad[V]) (value V, err error, again bool) {
	select {
	case <-l.done:
		switch {
		case !l.abandoned:
			return l.value, l.err, false
		case ctx.Err() == nil && c.ctx.Err() == nil:
			return value, nil, true
		}
		return value, fmt.Errorf("%w: %w", ErrPending, l.err), false
	case <-ctx.Done():
		return value, fmt.Errorf("%w (%w)", ErrPending, ctx.Err()), false
	}
}

// insert adds an entry and evicts from the old end until the bound holds;
// c.mu is held.
func (c *Cache[K, V]) insert(e *cacheEntry[K, V]) {
	if e.size > c.opts.MaxBytes {
		return
	}
	if el, ok := c.entries[e.key]; ok {
		c.remove(el)
	}
	c.entries[e.key] = c.order.PushFront(e)
	c.used += e.size
	for c.used > c.opts.MaxBytes {
		c.remove(c.order.Back())
		c.evictions.Add(1)
	}
}

// remove drops an entry; c.mu is held.
func (c *Cache[K, V]) remove(el *list.Element) {
	e := el.Value.(*cacheEntry[K, V])
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.size
}

// CacheStats are a cache's counters since it was made.
type CacheStats struct {
	// Hits are the Gets answered by an entry or by a load another caller
	// started; Misses the loads started; Evictions the entries dropped to
	// keep the bound.
	Hits, Misses, Evictions int64
	// Bytes and Entries are what the cache holds now.
	Bytes   int64
	Entries int
}

// Stats returns the cache's counters.
func (c *Cache[K, V]) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(),
		Bytes: c.used, Entries: len(c.entries),
	}
}

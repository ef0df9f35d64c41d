package symbolication

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"
)

// Cache holds parsed artifacts by key, bounded by the sum of their sizes in
// bytes: adding past the bound evicts the least recently used entries. Each
// key is loaded once even when many goroutines ask for it at the same time,
// and a failed load is remembered too (as an entry of errorEntryBytes), so
// that a missing or broken artifact is not read again for every frame;
// a Transient error (an artifact not ready yet, a caller that gave up) is
// returned to the callers of that load and not kept.
//
// An entry larger than the whole bound is returned to its caller but not
// kept. The zero value is not usable; call NewCache.
type Cache[K comparable, V any] struct {
	maxBytes int64
	// errorTTL is how long a failed load is remembered; 0 is until evicted.
	errorTTL time.Duration

	mu       sync.Mutex
	used     int64
	order    *list.List // of *cacheEntry[K, V], most recent first
	entries  map[K]*list.Element
	inflight map[K]*load[V]

	hits, misses, evictions atomic.Int64
}

// errorEntryBytes is what a remembered load failure counts for.
const errorEntryBytes = 256

type cacheEntry[K comparable, V any] struct {
	key   K
	value V
	err   error
	size  int64
	// expires is when a failed load is tried again (zero: never).
	expires time.Time
}

type load[V any] struct {
	done  chan struct{}
	value V
	err   error
}

// NewCache returns a cache that keeps at most maxBytes of entries.
func NewCache[K comparable, V any](maxBytes int64) *Cache[K, V] {
	return &Cache[K, V]{
		maxBytes: maxBytes,
		order:    list.New(),
		entries:  map[K]*list.Element{},
		inflight: map[K]*load[V]{},
	}
}

// WithErrorTTL makes the cache forget a failed load after ttl, so that an
// artifact deployed after the first frames asked for it is found. It
// returns c.
func (c *Cache[K, V]) WithErrorTTL(ttl time.Duration) *Cache[K, V] {
	c.errorTTL = ttl
	return c
}

// Get returns the entry of key, calling loadFn to make it when it is absent.
// loadFn returns the value and its size in bytes; its error is returned (and
// remembered) instead.
func (c *Cache[K, V]) Get(key K, loadFn func() (V, int64, error)) (V, error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry[K, V])
		if e.expires.IsZero() || time.Now().Before(e.expires) {
			c.order.MoveToFront(el)
			c.mu.Unlock()
			c.hits.Add(1)
			return e.value, e.err
		}
		c.remove(el)
	}
	if l, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-l.done
		c.hits.Add(1)
		return l.value, l.err
	}
	l := &load[V]{done: make(chan struct{})}
	c.inflight[key] = l
	c.mu.Unlock()
	c.misses.Add(1)

	value, size, err := loadFn()
	e := &cacheEntry[K, V]{key: key, value: value, err: err, size: size}
	if err != nil {
		e.size = errorEntryBytes
		if c.errorTTL > 0 {
			e.expires = time.Now().Add(c.errorTTL)
		}
	}
	l.value, l.err = value, err
	c.mu.Lock()
	delete(c.inflight, key)
	if err == nil || !Transient(err) {
		c.insert(e)
	}
	c.mu.Unlock()
	close(l.done)
	return value, err
}

// insert adds an entry and evicts from the old end until the bound holds;
// c.mu is held.
func (c *Cache[K, V]) insert(e *cacheEntry[K, V]) {
	if e.size > c.maxBytes {
		return
	}
	c.entries[e.key] = c.order.PushFront(e)
	c.used += e.size
	for c.used > c.maxBytes {
		old := c.order.Back()
		oe := old.Value.(*cacheEntry[K, V])
		c.order.Remove(old)
		delete(c.entries, oe.key)
		c.used -= oe.size
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

package sentryhttp

import (
	"net/http"
	"sync"
	"time"
)

// Rate-limit categories of profiles (Relay's DataCategory names).
const (
	CategoryProfile           = "profile"             // V1 profiles
	CategoryProfileIndexed    = "profile_indexed"     // V1 profiles that are stored and indexed
	CategoryProfileChunk      = "profile_chunk"       // V2 chunks of backend platforms
	CategoryProfileChunkUI    = "profile_chunk_ui"    // V2 chunks of UI platforms (cocoa, android, javascript)
	CategoryProfileDuration   = "profile_duration"    // continuous profiling time, backend
	CategoryProfileDurationUI = "profile_duration_ui" // continuous profiling time, UI
)

const (
	// defaultRetryAfter applies to a 429 without a usable Retry-After or
	// X-Sentry-Rate-Limits, as all SDKs do.
	defaultRetryAfter = 60 * time.Second
	// maxCategories bounds the tracked categories: Sentry has a few dozen, a
	// misbehaving upstream must not grow the map without end.
	maxCategories = 256
)

// RateLimits tracks until when Sentry asked not to send each data category.
// The zero value has no limits. It is safe for concurrent use; it must not be
// copied after first use.
type RateLimits struct {
	mu    sync.Mutex
	all   time.Time            // end of a limit on every category
	until map[string]time.Time // end of each category's own limit
}

// Update records the limits of one response:
//   - X-Sentry-Rate-Limits (on any status), every entry of every line (see
//     ParseRateLimits); an empty category list means every category;
//   - otherwise, on 429, Retry-After (seconds or an HTTP date) for every
//     category, 60 s when absent or unusable.
//
// A limit is only ever extended by an update, never shortened.
func (l *RateLimits) Update(statusCode int, header http.Header, now time.Time) {
	if len(header.Values(HeaderRateLimits)) > 0 {
		l.applyAll(header, now)
		return
	}
	if statusCode == http.StatusTooManyRequests {
		l.limitAll(retryAfterOr(header, now, defaultRetryAfter), now)
	}
}

// applyAll records every X-Sentry-Rate-Limits entry of header.
func (l *RateLimits) applyAll(header http.Header, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	for limit := range ParseRateLimits(header) {
		l.apply(limit, now)
	}
}

// limitAll limits every category for delay.
func (l *RateLimits) limitAll(delay time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	l.extendAll(now.Add(delay))
}

// retryAfterOr is header's Retry-After, or fallback when it has none.
func retryAfterOr(header http.Header, now time.Time, fallback time.Duration) time.Duration {
	if delay, ok := ParseRetryAfter(header.Get(HeaderRetryAfter), now); ok {
		return delay
	}
	return fallback
}

// apply records one entry. Callers hold l.mu.
func (l *RateLimits) apply(limit RateLimit, now time.Time) {
	until := now.Add(limit.Wait)
	if len(limit.Categories) == 0 {
		l.extendAll(until)
		return
	}
	for _, category := range limit.Categories {
		l.extend(category, until)
	}
}

// RetryAfter returns how long category must still wait at now: the longer of
// its own limit and a limit on every category; 0 when it is not limited.
func (l *RateLimits) RetryAfter(category string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	until := l.all
	if c, ok := l.until[category]; ok && c.After(until) {
		until = c
	}
	if !until.After(now) {
		return 0
	}
	return until.Sub(now)
}

// extendAll sets the limit on every category to until unless a later one is
// recorded. Callers hold l.mu.
func (l *RateLimits) extendAll(until time.Time) {
	if until.After(l.all) {
		l.all = until
	}
}

// extend sets category's limit to until unless a later one is recorded.
// Callers hold l.mu.
func (l *RateLimits) extend(category string, until time.Time) {
	cur, known := l.until[category]
	if known && !until.After(cur) {
		return
	}
	if !known && len(l.until) >= maxCategories {
		return
	}
	if l.until == nil {
		l.until = make(map[string]time.Time)
	}
	l.until[category] = until
}

// prune drops expired limits so the map holds only live ones. Callers hold
// l.mu.
func (l *RateLimits) prune(now time.Time) {
	for category, until := range l.until {
		if !until.After(now) {
			delete(l.until, category)
		}
	}
}

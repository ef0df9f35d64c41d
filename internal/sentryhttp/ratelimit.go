package sentryhttp

import (
	"net/http"
	"strconv"
	"strings"
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
	// maxRetryAfter bounds a parsed delay: far beyond any real quota window
	// (monthly quotas), and far from overflowing a time.Duration.
	maxRetryAfter = 31 * 24 * time.Hour
	// maxCategories bounds the tracked categories: Sentry has a few dozen, a
	// misbehaving upstream must not grow the map without end.
	maxCategories = 256
	// maxCategoryLen rejects category names no real category approaches.
	maxCategoryLen = 64
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
//   - X-Sentry-Rate-Limits (on any status), a comma-separated list of
//     "<retry_after>:<cat;cat>:<scope>[:<reason>[:<namespaces>]]"; an empty
//     category list means every category; entries that do not parse are
//     ignored;
//   - otherwise, on 429, Retry-After (seconds or an HTTP date) for every
//     category, 60 s when absent or unusable.
//
// A limit is only ever extended by an update, never shortened.
func (l *RateLimits) Update(statusCode int, header http.Header, now time.Time) {
	if values := header.Values(HeaderRateLimits); len(values) > 0 {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.prune(now)
		for _, v := range values {
			for entry := range strings.SplitSeq(v, ",") {
				l.applyEntry(entry, now)
			}
		}
		return
	}
	if statusCode != http.StatusTooManyRequests {
		return
	}
	delay, ok := ParseRetryAfter(header.Get("Retry-After"), now)
	if !ok {
		delay = defaultRetryAfter
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	l.extendAll(now.Add(delay))
}

// applyEntry records one "<retry_after>:<categories>:…" entry. The scope,
// reason and namespaces only say why and for whom; the wait is the same.
func (l *RateLimits) applyEntry(entry string, now time.Time) {
	fields := strings.Split(strings.TrimSpace(entry), ":")
	if len(fields) < 2 {
		return
	}
	delay, ok := parseSeconds(fields[0])
	if !ok {
		return
	}
	until := now.Add(delay)
	if strings.TrimSpace(fields[1]) == "" {
		l.extendAll(until)
		return
	}
	for category := range strings.SplitSeq(fields[1], ";") {
		category = strings.TrimSpace(category)
		if validCategory(category) {
			l.extend(category, until)
		}
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
	if cur, ok := l.until[category]; ok && !until.After(cur) {
		return
	}
	if l.until == nil {
		l.until = make(map[string]time.Time)
	}
	if _, ok := l.until[category]; !ok && len(l.until) >= maxCategories {
		return
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

// ParseRetryAfter parses a Retry-After value, delay-seconds or an HTTP date,
// into the delay from now. A date in the past is a delay of 0. It reports
// false for an empty or unparsable value.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, ok := parseSeconds(v); ok {
		return d, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}

// parseSeconds parses a non-negative decimal number of seconds; Sentry sends
// integers, some proxies send fractions. Only digits and a point are
// accepted: ParseFloat alone would take "Inf", "1e9" and hex floats.
func parseSeconds(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if f >= maxRetryAfter.Seconds() {
		return maxRetryAfter, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// validCategory accepts the shape of Relay's category names (lower-case
// words joined by "_"), so garbage never becomes a tracked category.
func validCategory(s string) bool {
	if s == "" || len(s) > maxCategoryLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

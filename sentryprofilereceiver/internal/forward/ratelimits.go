package forward // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

// maxRateLimits bounds the distinct rate limits remembered.
const maxRateLimits = 64

// rateLimits remembers the X-Sentry-Rate-Limits the upstream announced, so
// that with a spool (where the SDK is answered before the upstream sees
// its request) the SDK still learns them from the next answer and stops
// sending what Sentry would drop, as it would without the collector.
type rateLimits struct {
	mu sync.Mutex
	// until maps a quota (an entry without its wait, RateLimit.Quota) to
	// when it ends.
	until map[string]time.Time
}

func newRateLimits() *rateLimits { return &rateLimits{until: make(map[string]time.Time)} }

// update records the limits of an upstream answer received at now.
func (l *rateLimits) update(h http.Header, now time.Time) {
	if len(h.Values(sentryhttp.HeaderRateLimits)) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	for limit := range sentryhttp.ParseRateLimits(h) {
		if limit.Wait > 0 {
			l.extend(limit.Quota(), now.Add(limit.Wait))
		}
	}
}

// extend sets quota's end to end unless a later one is remembered, or the
// table is full. Callers hold l.mu.
func (l *rateLimits) extend(quota string, end time.Time) {
	current, known := l.until[quota]
	if !known && len(l.until) >= maxRateLimits {
		return
	}
	if end.After(current) {
		l.until[quota] = end
	}
}

func (l *rateLimits) expire(now time.Time) {
	for quota, end := range l.until {
		if !end.After(now) {
			delete(l.until, quota)
		}
	}
}

// header is the limits still running at now, in X-Sentry-Rate-Limits
// form with the seconds left (rounded up), or "" when there are none.
func (l *rateLimits) header(now time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	entries := make([]string, 0, len(l.until))
	for quota, end := range l.until {
		entries = append(entries, sentryhttp.FormatRateLimit(end.Sub(now), quota))
	}
	slices.Sort(entries)
	return strings.Join(entries, ", ")
}

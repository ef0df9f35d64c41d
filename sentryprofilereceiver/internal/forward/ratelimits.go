package forward // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxRateLimits bounds the distinct rate limits remembered.
const maxRateLimits = 64

// rateLimits remembers the X-Sentry-Rate-Limits the upstream announced, so
// that with a spool (where the SDK is answered before the upstream sees
// its request) the SDK still learns them from the next answer and stops
// sending what Sentry would drop, as it would without the collector.
type rateLimits struct {
	mu sync.Mutex
	// until maps a limit without its seconds ("<categories>:<scope>…") to
	// when it ends.
	until map[string]time.Time
}

func newRateLimits() *rateLimits { return &rateLimits{until: make(map[string]time.Time)} }

// update records the limits of an upstream answer received at now.
func (l *rateLimits) update(h http.Header, now time.Time) {
	v := h.Get(sentryRateLimitsHeader)
	if v == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	for _, limit := range strings.Split(v, ",") {
		secs, rest, ok := strings.Cut(strings.TrimSpace(limit), ":")
		d, err := strconv.ParseFloat(secs, 64)
		if !ok || err != nil || d <= 0 || math.IsInf(d, 0) || strings.ContainsAny(rest, "\r\n") {
			continue
		}
		end := now.Add(time.Duration(min(d, 7*24*3600) * float64(time.Second)))
		if _, known := l.until[rest]; !known && len(l.until) >= maxRateLimits {
			continue
		}
		if end.After(l.until[rest]) {
			l.until[rest] = end
		}
	}
}

func (l *rateLimits) expire(now time.Time) {
	for k, end := range l.until {
		if !end.After(now) {
			delete(l.until, k)
		}
	}
}

// header is the limits still running at now, in X-Sentry-Rate-Limits
// form with the seconds left (rounded up), or "" when there are none.
func (l *rateLimits) header(now time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	out := make([]string, 0, len(l.until))
	for rest, end := range l.until {
		secs := int64(math.Ceil(end.Sub(now).Seconds()))
		out = append(out, strconv.FormatInt(secs, 10)+":"+rest)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

const sentryRateLimitsHeader = "X-Sentry-Rate-Limits"

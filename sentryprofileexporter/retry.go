package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"sync"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
)

// retryBudget applies retry_on_failure::max_elapsed_time to the time a
// request spends failing, not to the time it spends waiting for a rate
// limit.
//
// exporterhelper counts max_elapsed_time from a request's first attempt and
// drops it, uncounted, when a wait would pass it: a Sentry rate limit of
// hours or days (a monthly quota) would drop every request at once. So the
// exporter hands exporterhelper an unlimited max_elapsed_time (see
// createProfiles) and keeps the configured one here, per request: time
// after a failure that is not a rate limit is spent, time after a rate
// limit is not. When the spent time passes the budget, pushProfiles drops
// the request itself and counts it (reason retries_exhausted).
//
// Requests are told apart by their pdata value (pprofile.Profiles,
// plog.Logs, ptrace.Traces, pmetric.Metrics: the pointers inside it): exporterhelper hands the same value to every retry of a
// request, and pushProfiles moves the record to the copy it returns for a
// partial retry. Records of requests that never came back (a cancelled
// context, a shutdown) are forgotten after staleAfter.
type retryBudget struct {
	max        time.Duration // 0: unlimited
	staleAfter time.Duration

	mu       sync.Mutex
	requests map[any]*retryState
}

// retryState is one request's record.
type retryState struct {
	budget *retryBudget
	spent  time.Duration
	// failedAt is when the last attempt failed for a reason other than a
	// rate limit: the time until the next attempt is spent. Zero after a
	// rate limit.
	failedAt time.Time
	seen     time.Time
}

func newRetryBudget(cfg configretry.BackOffConfig) *retryBudget {
	b := &retryBudget{requests: map[any]*retryState{}}
	if cfg.Enabled {
		b.max = cfg.MaxElapsedTime
	}
	// A request waiting for a rate limit comes back when it ends; one
	// failing comes back within max_interval. Either way well within a day
	// plus the budget, unless nothing retries it any more.
	b.staleAfter = b.max + 2*cfg.MaxInterval + 24*time.Hour
	return b
}

// begin returns the record of a request, counting the time since its last
// failure as spent.
func (b *retryBudget) begin(pd any, now time.Time) *retryState {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.requests[pd]
	if !ok {
		b.forgetStale(now)
		s = &retryState{budget: b}
		b.requests[pd] = s
	}
	if !s.failedAt.IsZero() {
		s.spent += now.Sub(s.failedAt)
		s.failedAt = time.Time{}
	}
	s.seen = now
	return s
}

// forgetStale drops the records not seen for staleAfter; b.mu is held.
// It runs when a record is added, and only walks the map when it has grown
// past what a busy exporter keeps in flight.
func (b *retryBudget) forgetStale(now time.Time) {
	if len(b.requests) < 1024 {
		return
	}
	for k, s := range b.requests {
		if now.Sub(s.seen) > b.staleAfter {
			delete(b.requests, k)
		}
	}
}

// fail records a failure that is not a rate limit and reports whether the
// request has spent its budget: it is then dropped, not retried.
func (s *retryState) fail(now time.Time) bool {
	b := s.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	s.failedAt = now
	return b.max > 0 && s.spent >= b.max
}

// rateLimited records that the request waits for a rate limit only.
func (s *retryState) rateLimited() {
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	s.failedAt = time.Time{}
}

// end forgets a request that is done: delivered, or dropped for good.
func (b *retryBudget) end(pd any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.requests, pd)
}

// move hands the record of a request over to the copy that will be retried
// in its place.
func (b *retryBudget) move(from, to any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.requests[from]; ok {
		delete(b.requests, from)
		b.requests[to] = s
	}
}

package sentryprofileexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// TestRetryBudget: only the time after a failure that is not a rate limit
// is spent; a partial retry keeps the record; a finished request is
// forgotten.
func TestRetryBudget(t *testing.T) {
	cfg := configretry.NewDefaultBackOffConfig()
	cfg.MaxElapsedTime = time.Minute
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

	type step struct {
		after       time.Duration // since the previous step
		rateLimited bool          // the attempt was rate limited, else it failed
		exhausted   bool          // fail reports the budget spent
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"failures within the budget", []step{{0, false, false}, {30 * time.Second, false, false}, {29 * time.Second, false, false}}},
		{"failures past the budget", []step{{0, false, false}, {40 * time.Second, false, false}, {40 * time.Second, false, true}}},
		{"a day of rate limits spends nothing", []step{{0, true, false}, {24 * time.Hour, true, false}, {24 * time.Hour, false, false}, {30 * time.Second, false, false}}},
		{"the wait after a failure is spent even when a rate limit follows", []step{{0, false, false}, {50 * time.Second, true, false}, {time.Hour, false, false}, {20 * time.Second, false, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRetryBudget(cfg)
			pd := pprofile.NewProfiles()
			now := t0
			for i, st := range tt.steps {
				now = now.Add(st.after)
				s := b.begin(pd, now)
				if st.rateLimited {
					s.rateLimited()
					continue
				}
				assert.Equal(t, st.exhausted, s.fail(now), "step %d", i)
			}
		})
	}

	t.Run("a partial retry keeps the record", func(t *testing.T) {
		b := newRetryBudget(cfg)
		first, next := pprofile.NewProfiles(), pprofile.NewProfiles()
		assert.False(t, b.begin(first, t0).fail(t0))
		b.move(first, next)
		assert.True(t, b.begin(next, t0.Add(2*time.Minute)).fail(t0.Add(2*time.Minute)))
		b.end(next)
		assert.Empty(t, b.requests)
	})
	t.Run("without a max_elapsed_time nothing is exhausted", func(t *testing.T) {
		unlimited := cfg
		unlimited.MaxElapsedTime = 0
		b := newRetryBudget(unlimited)
		pd := pprofile.NewProfiles()
		b.begin(pd, t0).fail(t0)
		assert.False(t, b.begin(pd, t0.Add(1000*time.Hour)).fail(t0.Add(1000*time.Hour)))
	})
	t.Run("records of requests that never came back are forgotten", func(t *testing.T) {
		b := newRetryBudget(cfg)
		for range 1100 {
			b.begin(pprofile.NewProfiles(), t0).fail(t0)
		}
		b.begin(pprofile.NewProfiles(), t0.Add(b.staleAfter+time.Second))
		assert.Len(t, b.requests, 1)
	})
}

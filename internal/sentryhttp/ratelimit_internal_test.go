package sentryhttp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A flood of distinct categories must not grow the table past its bound.
func TestRateLimitsTableIsBounded(t *testing.T) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("cat_%d", i)
	}
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	var l RateLimits
	l.Update(200, http.Header{HeaderRateLimits: {"60:" + strings.Join(names, ";") + ":org"}}, now)
	if got := len(l.until); got != maxCategories {
		t.Fatalf("tracked %d categories, want the bound %d", got, maxCategories)
	}
	l.Update(200, http.Header{HeaderRateLimits: {"1:profile_chunk:org"}}, now.Add(time.Minute))
	if got := len(l.until); got != 1 {
		t.Fatalf("after expiry tracked %d categories, want 1", got)
	}
}

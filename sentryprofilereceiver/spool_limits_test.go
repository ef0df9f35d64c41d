package sentryprofilereceiver

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitsRemembered(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name    string
		headers []string // announced one second apart
		after   time.Duration
		want    string
	}{
		{"none", nil, 0, ""},
		{"one limit, seconds left", []string{"60:transaction:organization"}, 0, "59:transaction:organization"},
		{"expired", []string{"60:transaction:organization"}, time.Minute, ""},
		{"several, sorted", []string{"60:transaction:organization, 30:error;default:project:usage_exceeded"}, 0,
			"29:error;default:project:usage_exceeded, 59:transaction:organization"},
		{"the later end wins", []string{"600:transaction:organization", "60:transaction:organization"}, 0, "598:transaction:organization"},
		{"an all-categories limit", []string{"10::organization"}, 0, "9::organization"},
		{"garbage and header injection ignored", []string{"soon:error, -5:error, 10, 10:x\r\nSet-Cookie: a=b, NaN:error"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newRateLimits()
			at := now
			for _, h := range tt.headers {
				l.update(http.Header{sentryRateLimitsHeader: {h}}, at)
				at = at.Add(time.Second)
			}
			assert.Equal(t, tt.want, l.header(at.Add(tt.after)))
		})
	}
	t.Run("bounded", func(t *testing.T) {
		l := newRateLimits()
		for i := range 2 * maxRateLimits {
			l.update(http.Header{sentryRateLimitsHeader: {"60:c" + strconv.Itoa(i) + ":organization"}}, now)
		}
		assert.Len(t, l.until, maxRateLimits)
	})
}

// TestSpoolTellsTheSDKTheRateLimits: the SDK is answered before Sentry
// sees its request, so it learns Sentry's rate limits from the answers
// that follow.
func TestSpoolTellsTheSDKTheRateLimits(t *testing.T) {
	upstream := newFakeSentry(t)
	upstream.answer = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Sentry-Rate-Limits", "60:transaction:organization")
		_, _ = w.Write([]byte("{}"))
	}
	url, _, _ := startSpooling(t, newMemStorage(), upstream.URL, 1<<20)
	first := sendStore(t, url, 0)
	require.Equal(t, http.StatusOK, first.status)
	assert.Empty(t, first.header.Get("X-Sentry-Rate-Limits"), "nothing known yet")
	require.Eventually(t, func() bool { return len(upstream.got()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		return sendStore(t, url, 1).header.Get("X-Sentry-Rate-Limits") != ""
	}, 5*time.Second, 10*time.Millisecond)
	assert.Regexp(t, `^(59|60):transaction:organization$`, sendStore(t, url, 2).header.Get("X-Sentry-Rate-Limits"))
}

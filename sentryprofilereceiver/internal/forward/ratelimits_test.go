package forward

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

func TestRateLimitsRemembered(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name    string
		answers [][]string // each answer's header lines, one second apart
		after   time.Duration
		want    string
	}{
		{"none", nil, 0, ""},
		{"one limit, seconds left", [][]string{{"60:transaction:organization"}}, 0, "59:transaction:organization"},
		{"expired", [][]string{{"60:transaction:organization"}}, time.Minute, ""},
		{"several, sorted", [][]string{{"60:transaction:organization, 30:error;default:project:usage_exceeded"}}, 0,
			"29:error;default:project:usage_exceeded, 59:transaction:organization"},
		{"every header line", [][]string{{"60:transaction:organization", "30:error;default:project:usage_exceeded"}}, 0,
			"29:error;default:project:usage_exceeded, 59:transaction:organization"},
		{"the later end wins", [][]string{{"600:transaction:organization"}, {"60:transaction:organization"}}, 0, "598:transaction:organization"},
		{"an all-categories limit", [][]string{{"10::organization"}}, 0, "9::organization"},
		{"namespaces kept", [][]string{{"10:metric_bucket:organization:quota_exceeded:custom"}}, 0, "9:metric_bucket:organization:quota_exceeded:custom"},
		{"garbage and header injection ignored", [][]string{{"soon:error, -5:error, 10, 10:x\r\nSet-Cookie: a=b, NaN:error, 1e3:error, Inf:error"}}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newRateLimits()
			at := now
			for _, lines := range tt.answers {
				l.update(http.Header{sentryhttp.HeaderRateLimits: lines}, at)
				at = at.Add(time.Second)
			}
			assert.Equal(t, tt.want, l.header(at.Add(tt.after)))
		})
	}
	t.Run("bounded", func(t *testing.T) {
		l := newRateLimits()
		for i := range 2 * maxRateLimits {
			l.update(http.Header{sentryhttp.HeaderRateLimits: {"60:c" + strconv.Itoa(i) + ":organization"}}, now)
		}
		assert.Len(t, l.until, maxRateLimits)
	})
}

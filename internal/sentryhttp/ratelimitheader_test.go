package sentryhttp_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

func TestParseRateLimits(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []sentryhttp.RateLimit
	}{
		{"none", nil, nil},
		{"every field", []string{"15:metric_bucket:organization:quota_exceeded:custom;spans"}, []sentryhttp.RateLimit{
			{Wait: 15 * time.Second, Categories: []string{"metric_bucket"}, Scope: "organization", Reason: "quota_exceeded", Namespaces: []string{"custom", "spans"}},
		}},
		{"every category", []string{"30::organization"}, []sentryhttp.RateLimit{{Wait: 30 * time.Second, Scope: "organization"}}},
		{"every line, in order", []string{"60:transaction:organization, 5:error;default:project", "7:profile_chunk:key"}, []sentryhttp.RateLimit{
			{Wait: time.Minute, Categories: []string{"transaction"}, Scope: "organization"},
			{Wait: 5 * time.Second, Categories: []string{"error", "default"}, Scope: "project"},
			{Wait: 7 * time.Second, Categories: []string{"profile_chunk"}, Scope: "key"},
		}},
		{"invalid names dropped, the entry kept", []string{"20:PROFILE_CHUNK;profile_chunk_ui:Org:usage exceeded"}, []sentryhttp.RateLimit{
			{Wait: 20 * time.Second, Categories: []string{"profile_chunk_ui"}},
		}},
		{"no valid category: the entry does not widen to every category", []string{"20:PROFILE CHUNK:org"}, nil},
		{"unusable waits skipped", []string{"soon:error, -5:error, Inf:error, NaN:error, 1e3:error, :error, 60"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Collect(sentryhttp.ParseRateLimits(http.Header{sentryhttp.HeaderRateLimits: tt.lines}))
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRateLimitQuotaAndFormat(t *testing.T) {
	tests := []struct {
		entry string
		wait  time.Duration
		want  string
	}{
		{"60:transaction:organization", 59 * time.Second, "59:transaction:organization"},
		{"60::organization", 500 * time.Millisecond, "1::organization"},
		{"60:error;default:project:usage_exceeded", time.Minute, "60:error;default:project:usage_exceeded"},
		{"60:metric_bucket:organization::custom", time.Second, "1:metric_bucket:organization::custom"},
		{"60:transaction", time.Second, "1:transaction:"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			limits := slices.Collect(sentryhttp.ParseRateLimits(http.Header{sentryhttp.HeaderRateLimits: {tt.entry}}))
			if assert.Len(t, limits, 1) {
				assert.Equal(t, tt.want, sentryhttp.FormatRateLimit(tt.wait, limits[0].Quota()))
			}
		})
	}
}

func TestLongestWait(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"nothing", http.Header{}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}, "X-Sentry-Rate-Limits": {"x:y"}}, 0, false},
		{"Retry-After seconds", http.Header{"Retry-After": {"30"}}, 30 * time.Second, true},
		{"Retry-After HTTP date", http.Header{"Retry-After": {t0.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"Retry-After HTTP date passed", http.Header{"Retry-After": {t0.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"the longest entry of every line", http.Header{"X-Sentry-Rate-Limits": {"60:transaction:org", "120:error:project, 5::key"}}, 2 * time.Minute, true},
		{"Retry-After longer than the entries", http.Header{"Retry-After": {"300"}, "X-Sentry-Rate-Limits": {"60::org"}}, 5 * time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sentryhttp.LongestWait(tt.header, t0)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzParseRateLimits feeds arbitrary header lines: every entry read has a
// wait within the cap and only valid names, its quota written back reads
// as the same quota (the forward's spool replays quotas to SDKs), and
// LongestWait is at least every entry's wait.
func FuzzParseRateLimits(f *testing.F) {
	for _, seed := range []string{
		"60:profile_chunk:organization:quota_exceeded",
		"15:metric_bucket:organization:quota_exceeded:custom;spans, 30::key",
		"1.5:a;;B:c, garbage, 9999999999999999999999:x:y",
		"10:x\r\nSet-Cookie: a=b",
	} {
		f.Add(seed, "60:transaction:organization", "120")
	}
	f.Fuzz(func(t *testing.T, line1, line2, retryAfter string) {
		header := http.Header{sentryhttp.HeaderRateLimits: {line1, line2}, sentryhttp.HeaderRetryAfter: {retryAfter}}
		longest, found := sentryhttp.LongestWait(header, t0)
		for limit := range sentryhttp.ParseRateLimits(header) {
			if limit.Wait < 0 || limit.Wait > 31*24*time.Hour {
				t.Fatalf("wait %v out of bounds", limit.Wait)
			}
			if !found || longest < limit.Wait {
				t.Fatalf("LongestWait %v (%v) below an entry's %v", longest, found, limit.Wait)
			}
			quota := limit.Quota()
			again := slices.Collect(sentryhttp.ParseRateLimits(http.Header{sentryhttp.HeaderRateLimits: {sentryhttp.FormatRateLimit(time.Second, quota)}}))
			if len(again) != 1 || again[0].Quota() != quota {
				t.Fatalf("quota %q reads back as %+v", quota, again)
			}
		}
	})
}

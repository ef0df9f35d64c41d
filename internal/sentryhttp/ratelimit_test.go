package sentryhttp_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

var t0 = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func TestRateLimitsUpdate(t *testing.T) {
	const (
		chunk   = sentryhttp.CategoryProfileChunk
		chunkUI = sentryhttp.CategoryProfileChunkUI
		profile = sentryhttp.CategoryProfile
	)
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		want    map[string]time.Duration // category → RetryAfter at t0
	}{
		{
			name:   "200 without headers",
			status: 200,
			want:   map[string]time.Duration{chunk: 0, profile: 0},
		},
		{
			name:   "429 without headers is 60 s for everything",
			status: 429,
			want:   map[string]time.Duration{chunk: 60 * time.Second, profile: 60 * time.Second, "transaction": 60 * time.Second},
		},
		{
			name:    "429 with Retry-After seconds",
			status:  429,
			headers: map[string]string{"Retry-After": "120"},
			want:    map[string]time.Duration{chunk: 120 * time.Second, profile: 120 * time.Second},
		},
		{
			name:    "429 with Retry-After HTTP date",
			status:  429,
			headers: map[string]string{"Retry-After": t0.Add(90 * time.Second).Format(http.TimeFormat)},
			want:    map[string]time.Duration{chunk: 90 * time.Second},
		},
		{
			name:    "429 with Retry-After in the past",
			status:  429,
			headers: map[string]string{"Retry-After": t0.Add(-time.Hour).Format(http.TimeFormat)},
			want:    map[string]time.Duration{chunk: 0},
		},
		{
			name:    "429 with garbage Retry-After falls back to 60 s",
			status:  429,
			headers: map[string]string{"Retry-After": "soon"},
			want:    map[string]time.Duration{chunk: 60 * time.Second},
		},
		{
			name:    "Retry-After outside a 429 is not a rate limit",
			status:  503,
			headers: map[string]string{"Retry-After": "30"},
			want:    map[string]time.Duration{chunk: 0},
		},
		{
			name:    "one category",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "60:profile_chunk:organization:quota_exceeded", "Retry-After": "999"},
			want:    map[string]time.Duration{chunk: 60 * time.Second, chunkUI: 0, profile: 0},
		},
		{
			name:    "several entries and categories",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "60:profile;profile_indexed:key, 2700:profile_chunk;profile_chunk_ui:organization:usage_exceeded"},
			want: map[string]time.Duration{
				profile:                           60 * time.Second,
				sentryhttp.CategoryProfileIndexed: 60 * time.Second,
				chunk:                             2700 * time.Second,
				chunkUI:                           2700 * time.Second,
				"transaction":                     0,
			},
		},
		{
			name:    "empty category list is every category",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "30::organization"},
			want:    map[string]time.Duration{chunk: 30 * time.Second, "anything": 30 * time.Second},
		},
		{
			name:    "the longer of a category limit and a global one",
			status:  200,
			headers: map[string]string{"X-Sentry-Rate-Limits": "10::organization, 100:profile_chunk:key"},
			want:    map[string]time.Duration{chunk: 100 * time.Second, profile: 10 * time.Second},
		},
		{
			name:    "header on a 200",
			status:  200,
			headers: map[string]string{"X-Sentry-Rate-Limits": "5:profile_chunk:project"},
			want:    map[string]time.Duration{chunk: 5 * time.Second},
		},
		{
			name:    "metric namespaces field tolerated",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "15:metric_bucket:organization:quota_exceeded:custom;spans"},
			want:    map[string]time.Duration{"metric_bucket": 15 * time.Second, chunk: 0},
		},
		{
			name:    "unknown categories only limit themselves",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "60:brand_new_category:organization"},
			want:    map[string]time.Duration{"brand_new_category": 60 * time.Second, chunk: 0},
		},
		{
			name:   "garbage entries are skipped, good ones kept",
			status: 429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "nonsense, -5:profile_chunk:org, inf:profile_chunk:org, 1e9:profile_chunk:org, " +
				"60, :profile_chunk:org, 20:PROFILE_CHUNK;profile chunk;profile_chunk_ui:org, ,,, 7.5:profile:org"},
			want: map[string]time.Duration{chunk: 0, chunkUI: 20 * time.Second, profile: 7500 * time.Millisecond},
		},
		{
			name:    "fractional seconds",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "0.25:profile_chunk:key"},
			want:    map[string]time.Duration{chunk: 250 * time.Millisecond},
		},
		{
			name:    "absurd delays are capped",
			status:  429,
			headers: map[string]string{"X-Sentry-Rate-Limits": "99999999999999999999:profile_chunk:key"},
			want:    map[string]time.Duration{chunk: 31 * 24 * time.Hour},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := http.Header{}
			for k, v := range tt.headers {
				header.Set(k, v)
			}
			var limits sentryhttp.RateLimits
			limits.Update(tt.status, header, t0)
			for category, want := range tt.want {
				assert.Equalf(t, want, limits.RetryAfter(category, t0), "category %q", category)
			}
		})
	}
}

func TestRateLimitsExpireAndOnlyExtend(t *testing.T) {
	var limits sentryhttp.RateLimits
	limits.Update(429, http.Header{"X-Sentry-Rate-Limits": {"60:profile_chunk:key"}}, t0)

	assert.Equal(t, 60*time.Second, limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0))
	assert.Equal(t, 15*time.Second, limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0.Add(45*time.Second)))
	assert.Equal(t, time.Duration(0), limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0.Add(60*time.Second)))
	assert.Equal(t, time.Duration(0), limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0.Add(time.Hour)))

	// A shorter limit does not cut a longer one short.
	limits.Update(429, http.Header{"X-Sentry-Rate-Limits": {"300:profile_chunk:key"}}, t0)
	limits.Update(429, http.Header{"X-Sentry-Rate-Limits": {"10:profile_chunk:key"}}, t0.Add(time.Second))
	assert.Equal(t, 300*time.Second, limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0))

	// Several header lines all count.
	limits.Update(200, http.Header{"X-Sentry-Rate-Limits": {"5:profile:key", "8:profile_indexed:key"}}, t0)
	assert.Equal(t, 5*time.Second, limits.RetryAfter(sentryhttp.CategoryProfile, t0))
	assert.Equal(t, 8*time.Second, limits.RetryAfter(sentryhttp.CategoryProfileIndexed, t0))
}

func TestRateLimitsBoundCategories(t *testing.T) {
	var b strings.Builder
	b.WriteString("60:")
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString("cat_")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteByte(byte('a' + i%26))
	}
	b.WriteString(":org, 60:profile_chunk:org")
	var limits sentryhttp.RateLimits
	limits.Update(429, http.Header{"X-Sentry-Rate-Limits": {b.String()}}, t0)
	// The flood fills the table; a real category arriving after it may be
	// dropped, but nothing panics and the global fallback still works.
	limits.Update(429, http.Header{}, t0)
	assert.Equal(t, 60*time.Second, limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0))
	// Once expired, the table is pruned and takes new categories again.
	later := t0.Add(2 * time.Minute)
	limits.Update(200, http.Header{"X-Sentry-Rate-Limits": {"30:profile_chunk_ui:org"}}, later)
	assert.Equal(t, 30*time.Second, limits.RetryAfter(sentryhttp.CategoryProfileChunkUI, later))
}

func TestRateLimitsConcurrentUse(t *testing.T) {
	var limits sentryhttp.RateLimits
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				now := t0.Add(time.Duration(j) * time.Millisecond)
				if i%2 == 0 {
					limits.Update(429, http.Header{"X-Sentry-Rate-Limits": {"60:profile_chunk:key"}}, now)
				} else {
					_ = limits.RetryAfter(sentryhttp.CategoryProfileChunk, now)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 60*time.Second+199*time.Millisecond, limits.RetryAfter(sentryhttp.CategoryProfileChunk, t0))
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 42 ", 42 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"-1", 0, false},
		{"Inf", 0, false},
		{t0.Add(time.Minute).Format(http.TimeFormat), time.Minute, true},
		{"Sunday, 22-Nov-26 06:02:00 GMT", 2 * time.Minute, true}, // RFC 850
		{"tomorrow", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := sentryhttp.ParseRetryAfter(tt.in, t0)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzRateLimits feeds arbitrary header values: nothing may panic, a limit is
// never negative nor beyond the cap, and limits never go backwards in time.
func FuzzRateLimits(f *testing.F) {
	for _, seed := range []string{
		"60:profile_chunk:organization:quota_exceeded",
		"60:profile;profile_indexed:key, 2700::organization",
		"15:metric_bucket:organization:quota_exceeded:custom",
		"",
		"::::",
		"1.5:a;;b:c, garbage, 9999999999999999999999:x:y",
	} {
		f.Add(429, seed, "120")
		f.Add(200, seed, "")
	}
	f.Add(429, "", t0.Format(http.TimeFormat))
	f.Fuzz(func(t *testing.T, status int, rateLimits, retryAfter string) {
		header := http.Header{}
		if rateLimits != "" {
			header.Set("X-Sentry-Rate-Limits", rateLimits)
		}
		if retryAfter != "" {
			header.Set("Retry-After", retryAfter)
		}
		var limits sentryhttp.RateLimits
		limits.Update(status, header, t0)
		categories := []string{"", sentryhttp.CategoryProfileChunk, sentryhttp.CategoryProfile, "x"}
		for _, c := range strings.FieldsFunc(rateLimits, func(r rune) bool { return r == ':' || r == ';' || r == ',' }) {
			categories = append(categories, strings.TrimSpace(c))
		}
		before := map[string]time.Duration{}
		for _, c := range categories {
			d := limits.RetryAfter(c, t0)
			if d < 0 || d > 31*24*time.Hour {
				t.Fatalf("category %q: retry after %v", c, d)
			}
			before[c] = d
		}
		limits.Update(status, header, t0)
		for _, c := range categories {
			if d := limits.RetryAfter(c, t0); d < before[c] {
				t.Fatalf("category %q: limit shrank from %v to %v", c, before[c], d)
			}
		}
	})
}

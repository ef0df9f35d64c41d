package loadgen

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

func TestHistogramQuantiles(t *testing.T) {
	tests := []struct {
		name    string
		obs     []time.Duration
		q       float64
		want    time.Duration
		withinP float64 // relative tolerance
	}{
		{name: "empty", q: 0.5, want: 0},
		{name: "single", obs: []time.Duration{3 * time.Millisecond}, q: 0.99, want: 3 * time.Millisecond},
		{name: "median of 1..100 ms", obs: rampMillis(100), q: 0.5, want: 50 * time.Millisecond, withinP: 0.09},
		{name: "p99 of 1..100 ms", obs: rampMillis(100), q: 0.99, want: 99 * time.Millisecond, withinP: 0.09},
		{name: "sub-microsecond", obs: []time.Duration{100, 200, 300}, q: 0.5, want: 300},
		{name: "beyond the last bucket", obs: []time.Duration{10 * time.Hour}, q: 1, want: 10 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, d := range tt.obs {
				h.Record(d)
			}
			got := h.Quantile(tt.q)
			if tt.withinP == 0 {
				assert.Equal(t, tt.want, got)
				return
			}
			assert.InEpsilon(t, float64(tt.want), float64(got), tt.withinP)
			assert.GreaterOrEqual(t, got, tt.want, "an upper bound, never below the true quantile")
		})
	}
}

func TestHistogramMerge(t *testing.T) {
	var a, b Histogram
	for _, d := range rampMillis(50) {
		a.Record(d)
	}
	for _, d := range rampMillis(50) {
		b.Record(d + 50*time.Millisecond)
	}
	a.Merge(&b)
	assert.Equal(t, uint64(100), a.Count())
	assert.Equal(t, 100*time.Millisecond, a.Max())
	assert.InEpsilon(t, float64(50*time.Millisecond), float64(a.Quantile(0.5)), 0.09)
}

// rampMillis returns 1 ms, 2 ms, ..., n ms.
func rampMillis(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i+1) * time.Millisecond
	}
	return out
}

// TestChunkEnvelopeIsWhatSDKsSend decodes a generated body the way the
// receiver would and checks the counts the load test relies on.
func TestChunkEnvelopeIsWhatSDKsSend(t *testing.T) {
	cfg := benchdata.SmallChunkConfig()
	env := ChunkEnvelope(cfg, 7)
	require.Equal(t, "gzip", env.Encoding)
	zr, err := gzip.NewReader(strings.NewReader(string(env.Body)))
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	_, items, err := envelope.Parse(raw, envelope.Limits{})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, "profile_chunk", items[0].Header.Type)
	assert.Equal(t, "python", items[0].Header.Platform)
	p, err := sentry.DecodeProfile(items[0].Payload)
	require.NoError(t, err)
	assert.Len(t, p.Samples, env.Samples)
	assert.Equal(t, env.ChunkID, p.ChunkID)
	assert.Len(t, env.ChunkID, 32)

	other := ChunkEnvelope(cfg, 8)
	assert.NotEqual(t, env.ChunkID, other.ChunkID, "seeds give distinct chunk ids")
}

func TestRun(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		assert.Equal(t, "gzip", r.Header.Get("Content-Encoding"))
		assert.Equal(t, "Sentry sentry_key=k", r.Header.Get("X-Sentry-Auth"))
		_, _ = io.Copy(io.Discard, r.Body)
		if n%4 == 0 { // every fourth request is pushed back
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()

	cfg := benchdata.SmallChunkConfig()
	src := ChunkSource(cfg, 4)
	tests := []struct {
		name         string
		config       Config
		wantRequests int
	}{
		{name: "bounded by request count", config: Config{Workers: 3, MaxRequests: 40, Duration: time.Minute}, wantRequests: 40},
		{name: "bounded by duration", config: Config{Workers: 2, Duration: 300 * time.Millisecond, MaxRequests: 1 << 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			tt.config.URL = srv.URL + "/api/1/envelope/"
			tt.config.AuthHeader = "Sentry sentry_key=k"
			tt.config.Source = src
			tt.config.RetryAfterCap = time.Millisecond
			start := time.Now()
			res, err := Run(context.Background(), tt.config)
			require.NoError(t, err)
			assert.Less(t, time.Since(start), 10*time.Second, "the run ends by itself")
			if tt.wantRequests > 0 {
				assert.Equal(t, tt.wantRequests, res.Requests)
			}
			// Requests in flight at the end complete: the server saw
			// exactly what the run counted.
			assert.Equal(t, int(calls.Load()), res.Requests+res.Errors)
			assert.Equal(t, res.Requests, res.Status[200]+res.Status[429])
			assert.Equal(t, res.Status[200]*cfg.Samples(), res.Samples, "samples count only for 200s")
			assert.Len(t, res.ChunkIDs, res.Status[200])
			assert.Equal(t, uint64(res.Requests), res.Latency.Count())
			assert.Positive(t, res.Rate())
			assert.Contains(t, res.String(), "429×")
		})
	}
}

func TestRunNeedsABound(t *testing.T) {
	_, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1/"})
	require.ErrorContains(t, err, "must end by itself")
	_, err = Run(context.Background(), Config{Duration: time.Second})
	require.ErrorContains(t, err, "URL is required")
}

func TestRunCountsTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	res, err := Run(context.Background(), Config{URL: url, MaxRequests: 5, Duration: 10 * time.Second, Source: ChunkSource(benchdata.SmallChunkConfig(), 1)})
	require.NoError(t, err)
	assert.Equal(t, 5, res.Errors)
	assert.Zero(t, res.Requests)
	assert.Error(t, res.LastError)
}

func TestUniqueChunkSource(t *testing.T) {
	src := UniqueChunkSource(benchdata.SmallChunkConfig(), 100)
	seen := map[string]bool{}
	for i := range 5 {
		id := src(i).ChunkID
		assert.False(t, seen[id], "request %d repeats chunk id %s", i, id)
		seen[id] = true
	}
}

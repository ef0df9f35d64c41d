package forward

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpoolRetry(t *testing.T) {
	backoff := 4 * time.Second
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	httpDate := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name        string
		answer      Answer
		wantVerdict spoolVerdict
		wantWait    time.Duration
	}{
		{"2xx delivered", Answer{Status: 200}, spoolDelivered, 0},
		{"3xx final: a redirect is not followed", Answer{Status: 302}, spoolRejected, 0},
		{"308 final", Answer{Status: 308}, spoolRejected, 0},
		{"4xx final", Answer{Status: 400}, spoolRejected, 0},
		{"413 final", Answer{Status: 413}, spoolRejected, 0},
		{"unreachable backs off", Answer{Err: context.DeadlineExceeded}, spoolRetryLater, backoff},
		{"503 without headers backs off", Answer{Status: 503, Header: http.Header{}}, spoolRetryLater, backoff},
		{"503 Retry-After", Answer{Status: 503, Header: http.Header{"Retry-After": {"30"}}}, spoolRetryLater, 30 * time.Second},
		{"503 with an absurd Retry-After is capped", Answer{Status: 503, Header: http.Header{"Retry-After": {"999999999"}}}, spoolRetryLater, spoolMaxBackoff},
		{"503 Retry-After as an HTTP date", Answer{Status: 503, Header: http.Header{"Retry-After": {httpDate(30 * time.Second)}}}, spoolRetryLater, 30 * time.Second},
		{"503 Retry-After as a past HTTP date: at once", Answer{Status: 503, Header: http.Header{"Retry-After": {httpDate(-time.Hour)}}}, spoolRetryLater, 0},
		{"408 retried", Answer{Status: 408, Header: http.Header{}}, spoolRetryLater, backoff},
		{"429 without headers backs off", Answer{Status: 429, Header: http.Header{}}, spoolRetryLater, backoff},
		{"429 Retry-After", Answer{Status: 429, Header: http.Header{"Retry-After": {"30"}}}, spoolRetryLater, 30 * time.Second},
		{"429 rate limits: the longest", Answer{Status: 429, Header: http.Header{
			"X-Sentry-Rate-Limits": {"60:transaction:organization, 120:error;default:project"}}}, spoolRetryLater, 120 * time.Second},
		{"Retry-After and rate limits: the longest", Answer{Status: 429, Header: http.Header{
			"Retry-After": {"120"}, "X-Sentry-Rate-Limits": {"60::organization"}}}, spoolRetryLater, 120 * time.Second},
		{"429 Retry-After as an HTTP date", Answer{Status: 429, Header: http.Header{"Retry-After": {httpDate(90 * time.Second)}}}, spoolRetryLater, 90 * time.Second},
		{"429 Retry-After as an HTTP date past the spool's wait: dropped", Answer{Status: 429, Header: http.Header{
			"Retry-After": {httpDate(time.Hour)}}}, spoolRateLimited, time.Hour},
		{"429 rate limits on several header lines: the longest", Answer{Status: 429, Header: http.Header{
			"X-Sentry-Rate-Limits": {"60:transaction:organization", "120:error;default:project"}}}, spoolRetryLater, 120 * time.Second},
		{"garbage headers back off", Answer{Status: 429, Header: http.Header{
			"Retry-After": {"soon"}, "X-Sentry-Rate-Limits": {"x:y"}}}, spoolRetryLater, backoff},
		{"a quota longer than the spool waits: dropped", Answer{Status: 429, Header: http.Header{
			"X-Sentry-Rate-Limits": {"2700:transaction:organization:usage_exceeded"}}}, spoolRateLimited, 2700 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, verdict := spoolRetry(tt.answer, backoff, now)
			assert.Equal(t, tt.wantVerdict, verdict)
			assert.Equal(t, tt.wantWait, wait)
		})
	}
}

func TestSpoolRecordEncoding(t *testing.T) {
	rec := &spoolRecord{Method: "POST", URI: "/api/42/envelope/?sentry_key=k",
		Header: http.Header{"Content-Encoding": {"gzip"}}, Body: []byte{0, 1, 2, 0xff}}
	b, err := rec.encode()
	require.NoError(t, err)
	got, err := decodeSpoolRecord(b)
	require.NoError(t, err)
	assert.Equal(t, rec, got)
	for _, bad := range [][]byte{nil, {0, 0}, {0, 0, 0, 9, '{'}, {0, 0, 0, 1, '{'}} {
		_, err := decodeSpoolRecord(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func FuzzDecodeSpoolRecord(f *testing.F) {
	rec := &spoolRecord{Method: "POST", URI: "/api/1/store/", Body: []byte("{}")}
	b, _ := rec.encode()
	f.Add(b)
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeSpoolRecord(data)
		if err != nil {
			return
		}
		again, err := r.encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeSpoolRecord(again); err != nil {
			t.Fatalf("a decoded record does not decode again: %v", err)
		}
	})
}

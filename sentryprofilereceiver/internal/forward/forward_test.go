package forward

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap/zaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// recorded is one request the fake upstream got.
type recorded struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// fakeSentry is an upstream that records what it gets and answers 200.
type fakeSentry struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

func newFakeSentry(t *testing.T) *fakeSentry {
	t.Helper()
	f := &fakeSentry{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"from-upstream"}`))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSentry) got() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// newForwarder is a Forwarder to upstream (a URL, possibly with a path).
func newForwarder(t *testing.T, upstream string, client *http.Client) *Forwarder {
	t.Helper()
	base, err := neturl.Parse(upstream)
	require.NoError(t, err)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(metadatatest.NewSettings(tel).TelemetrySettings)
	require.NoError(t, err)
	return New(Settings{Upstream: base, Client: client, Logger: zaptest.NewLogger(t), Telemetry: tb, RetryAfter: "60"})
}

// TestDeliverSpooledKeepsThePath: a stored request goes to the path and
// query it came with, escapes included, on the configured upstream; a
// stored path that is not a clean /api/ one is not sent.
func TestDeliverSpooledKeepsThePath(t *testing.T) {
	upstream := newFakeSentry(t)
	f := newForwarder(t, upstream.URL, upstream.Client())

	a := f.deliverSpooled(context.Background(), &spoolRecord{Method: http.MethodPost,
		URI: "/api/42/integration/otlp/v1/a%2Fb%20c/?sentry_key=k&x=%26", Header: http.Header{"X-Sentry-Auth": {"Sentry sentry_key=k"}}, Body: []byte("b")})
	require.NoError(t, a.Err)
	got := upstream.got()
	require.Len(t, got, 1)
	assert.Equal(t, "/api/42/integration/otlp/v1/a%2Fb%20c/", got[0].path)
	assert.Equal(t, "sentry_key=k&x=%26", got[0].query)
	assert.Equal(t, "Sentry sentry_key=k", got[0].header.Get("X-Sentry-Auth"))

	for _, uri := range []string{"/api/../admin/", "/admin/", "/api/%zz/"} {
		a := f.deliverSpooled(context.Background(), &spoolRecord{Method: http.MethodPost, URI: uri})
		assert.Equal(t, http.StatusBadRequest, a.Status, uri)
	}
	assert.Len(t, upstream.got(), 1, "nothing else was sent")
}

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

// TestTarget: a clean path under /api/ goes to the same path and query on
// the upstream, under its prefix; anything else is not forwarded.
func TestTarget(t *testing.T) {
	tests := []struct {
		name     string
		upstream string
		path     string // request URI
		want     string // "" when refused
	}{
		{"envelope", "https://o1.ingest.sentry.io", "/api/42/envelope/?sentry_key=k", "https://o1.ingest.sentry.io/api/42/envelope/?sentry_key=k"},
		{"under a prefix", "https://sentry.example.com/sentry/", "/api/42/store/", "https://sentry.example.com/sentry/api/42/store/"},
		{"escapes kept", "https://h.example", "/api/42/a%2Fb/", "https://h.example/api/42/a%2Fb/"},
		{"traversal", "https://h.example", "/api/../admin/", ""},
		{"encoded dots", "https://h.example", "/api/%2e%2e/admin/", ""},
		{"doubled slash", "https://h.example", "/api//42/store/", ""},
		{"outside /api/", "https://h.example", "/admin/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newForwarder(t, tt.upstream, http.DefaultClient)
			u, err := neturl.ParseRequestURI(tt.path)
			require.NoError(t, err)
			got, ok := f.Target(u)
			if tt.want == "" {
				assert.False(t, ok, "forwarded to %v", got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, got.String())
		})
	}
}

// TestSendHeaders: the upstream gets the headers that carry a request's
// meaning and Sentry auth, the client address, and no User-Agent when the
// SDK sent none; the encoding override replaces or drops Content-Encoding.
func TestSendHeaders(t *testing.T) {
	upstream := newFakeSentry(t)
	f := newForwarder(t, upstream.URL, upstream.Client())
	tests := []struct {
		name     string
		header   http.Header
		encoding string
		want     http.Header // checked keys; "" means absent
	}{
		{"sentry auth and encoding kept",
			http.Header{"X-Sentry-Auth": {"Sentry sentry_key=k"}, "Content-Encoding": {"gzip"}, "User-Agent": {"sentry.python/2.68.0"}, "Cookie": {"c=1"}},
			"", http.Header{"X-Sentry-Auth": {"Sentry sentry_key=k"}, "Content-Encoding": {"gzip"}, "User-Agent": {"sentry.python/2.68.0"}, "Cookie": {""},
				"X-Forwarded-For": {"192.0.2.1"}}},
		{"another auth scheme is the collector's", http.Header{"Authorization": {"Bearer t"}}, "",
			http.Header{"Authorization": {""}, "User-Agent": {""}}},
		{"sentry scheme in Authorization", http.Header{"Authorization": {"Sentry sentry_key=k"}}, "",
			http.Header{"Authorization": {"Sentry sentry_key=k"}}},
		{"re-serialized body goes uncompressed", http.Header{"Content-Encoding": {"br"}}, "-",
			http.Header{"Content-Encoding": {""}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/api/42/store/", nil)
			r.Header = tt.header
			r.RemoteAddr = "192.0.2.1:5000"
			target, ok := f.Target(r.URL)
			require.True(t, ok)
			a := f.Send(context.Background(), r, target, []byte("body"), tt.encoding)
			require.NoError(t, a.Err)
			assert.Equal(t, http.StatusOK, a.Status)
			got := upstream.got()
			require.Len(t, got, i+1)
			for k, v := range tt.want {
				assert.Equal(t, v[0], got[i].header.Get(k), k)
			}
			assert.Equal(t, []byte("body"), got[i].body)
		})
	}
}

// TestWriteAnswers: the SDK gets the upstream's status, body and the
// headers it acts on; an upstream that cannot be reached is 502, one that
// does not answer in time 504, both with Retry-After.
func TestWriteAnswers(t *testing.T) {
	f := newForwarder(t, "https://h.example", http.DefaultClient)
	tests := []struct {
		name       string
		answer     Answer
		wantStatus int
		wantHeader http.Header
		wantBody   string
	}{
		{"upstream answer", Answer{Status: 429, Body: []byte(`{}`), Header: http.Header{
			"X-Sentry-Rate-Limits": {"60::organization"}, "Retry-After": {"60"}, "Set-Cookie": {"s=1"}}},
			429, http.Header{"X-Sentry-Rate-Limits": {"60::organization"}, "Retry-After": {"60"}, "Set-Cookie": nil}, `{}`},
		{"unreachable", Answer{Err: &neturl.Error{Op: "Post", URL: "https://h.example", Err: io.ErrUnexpectedEOF}},
			http.StatusBadGateway, http.Header{"Retry-After": {"60"}}, `{"detail":"the upstream Sentry cannot be reached"}`},
		{"timeout", Answer{Err: &neturl.Error{Op: "Post", URL: "https://h.example", Err: context.DeadlineExceeded}},
			http.StatusGatewayTimeout, http.Header{"Retry-After": {"60"}}, `{"detail":"the upstream Sentry did not answer in time"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			f.Write(rec, tt.answer)
			assert.Equal(t, tt.wantStatus, rec.Code)
			for k, v := range tt.wantHeader {
				assert.Equal(t, v, rec.Header().Values(k), k)
			}
			assert.Equal(t, tt.wantBody, rec.Body.String())
		})
	}
}

func TestPathKind(t *testing.T) {
	for path, want := range map[string]string{
		"/api/42/envelope/": "envelope", "/api/42/store/": "store", "/api/42/minidump/": "minidump",
		"/api/42/csp-report/": "security", "/api/42/integration/otlp/v1/traces": "otlp",
		"/api/42/": "other", "/api/42/whatever/": "other",
	} {
		assert.Equal(t, want, pathKind(path), path)
	}
}

// TestRedirectsAreNotFollowed: an upstream answering a redirect to another
// host must not make the forwarder send the SDK's body and keys there; the
// SDK gets the redirect as the upstream's answer.
func TestRedirectsAreNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			elsewhere := newFakeSentry(t)
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), status)
			}))
			t.Cleanup(upstream.Close)
			// The receiver's client follows redirects, as confighttp's does:
			// the forwarder must not.
			f := newForwarder(t, upstream.URL, &http.Client{})

			r := httptest.NewRequest(http.MethodPost, "/api/42/envelope/?sentry_key=k", nil)
			r.Header.Set("X-Sentry-Auth", "Sentry sentry_key=k")
			target, ok := f.Target(r.URL)
			require.True(t, ok)
			a := f.Send(context.Background(), r, target, []byte("envelope"), "")
			require.NoError(t, a.Err)
			assert.Equal(t, status, a.Status)
			assert.Empty(t, elsewhere.got(), "the redirect was followed")

			w := httptest.NewRecorder()
			f.Write(w, a)
			assert.Equal(t, status, w.Code, "the SDK gets the upstream's answer")
		})
	}
}

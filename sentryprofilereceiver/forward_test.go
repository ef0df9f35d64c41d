package sentryprofilereceiver

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

// fakeSentry records every request it gets and answers as told.
type fakeSentry struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
	answer   func(w http.ResponseWriter, r *http.Request)
}

type recorded struct {
	method, path, query string
	header              http.Header
	body                []byte
}

func newFakeSentry(t *testing.T) *fakeSentry {
	t.Helper()
	f := &fakeSentry{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body})
		answer := f.answer
		f.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
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

func forwardTo(upstream string) func(*Config) {
	return func(c *Config) {
		client := defaultForwardClient()
		client.Endpoint = upstream
		client.Timeout = 2 * time.Second
		fwd := defaultForward()
		fwd.ClientConfig = client
		c.Forward = configoptional.Some(fwd)
	}
}

// A real SDK's mix: an error event, a transaction, a session, a client
// report, a replay and a profile chunk.
func mixedEnvelope() []byte {
	return envelopeOf(eventHeader,
		item{header: `{"type":"event"}`, payload: `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","exception":{"values":[{"type":"Error"}]}}`},
		transactionItem(linkTransaction),
		item{header: `{"type":"session"}`, payload: `{"sid":"7e7c1a4c-2b8a-4a0e-9a2e-1a2b3c4d5e6f","status":"exited"}`},
		item{header: `{"type":"client_report"}`, payload: `{"discarded_events":[]}`},
		item{header: `{"type":"replay_event"}`, payload: `{"replay_id":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}`},
		chunkItem(chunkPayload),
	)
}

func TestForwardEnvelopesByteForByte(t *testing.T) {
	env := mixedEnvelope()
	const nodeUA = "sentry.javascript.node/11.1.0"
	tests := []struct {
		name      string
		body      []byte
		encoding  string
		userAgent string // "" sends none, as @sentry/node 8.x and 9.x do
		prefix    string // the upstream's base path (a self-hosted Sentry under a prefix)
	}{
		{name: "plain", body: env, userAgent: nodeUA},
		{name: "gzip", body: compresstest.Bytes(t, "gzip", env), encoding: "gzip", userAgent: nodeUA},
		// Every encoding the receiver reads goes upstream as it came and
		// is decoded for the pipeline by the receiver itself.
		{name: "x-gzip", body: compresstest.Bytes(t, "x-gzip", env), encoding: "x-gzip", userAgent: nodeUA},
		{name: "deflate", body: compresstest.Bytes(t, "deflate", env), encoding: "deflate", userAgent: nodeUA},
		{name: "br", body: compresstest.Bytes(t, "br", env), encoding: "br", userAgent: nodeUA},
		{name: "zstd", body: compresstest.Bytes(t, "zstd", env), encoding: "zstd", userAgent: nodeUA},
		{name: "identity", body: env, encoding: "identity", userAgent: nodeUA},
		{name: "no User-Agent stays without one", body: env},
		{name: "upstream under a path prefix", body: env, userAgent: nodeUA, prefix: "/sentry"},
		{name: "upstream under a path prefix with a slash", body: env, userAgent: nodeUA, prefix: "/sentry/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := newFakeSentry(t)
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, forwardTo(upstream.URL+tt.prefix))
			headers := map[string]string{
				"X-Sentry-Auth": "Sentry sentry_key=" + testKey + ", sentry_version=7, sentry_client=sentry.javascript.node/11.1.0",
				"Content-Type":  "application/x-sentry-envelope",
			}
			if tt.userAgent != "" {
				headers["User-Agent"] = tt.userAgent
			}
			if tt.encoding != "" {
				headers["Content-Encoding"] = tt.encoding
			}
			req := newRequest(t, http.MethodPost, tr.url+"/api/42/envelope/?sentry_key="+testKey+"&sentry_version=7", tt.body, headers)
			if tt.userAgent == "" {
				req.Header["User-Agent"] = []string{""} // the test client sends none either
			}
			resp := do(t, req)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			//nolint:testifylint // byte for byte, not JSONEq: the upstream's answer is passed on, never re-encoded
			assert.Equal(t, `{"id":"from-upstream"}`, resp.body, "the SDK gets the upstream's answer")

			got := upstream.got()
			require.Len(t, got, 1)
			assert.Equal(t, tt.body, got[0].body, "the body as the SDK sent it")
			assert.Equal(t, strings.TrimSuffix(tt.prefix, "/")+"/api/42/envelope/", got[0].path)
			assert.Equal(t, "sentry_key="+testKey+"&sentry_version=7", got[0].query)
			assert.Equal(t, tt.encoding, got[0].header.Get("Content-Encoding"))
			assert.Equal(t, headers["X-Sentry-Auth"], got[0].header.Get("X-Sentry-Auth"))
			ua, sent := got[0].header["User-Agent"]
			if tt.userAgent == "" {
				assert.False(t, sent, "a request without User-Agent goes on without one, got %q", ua)
			} else {
				assert.Equal(t, []string{tt.userAgent}, ua)
			}
			assert.Equal(t, "127.0.0.1", got[0].header.Get("X-Forwarded-For"))
			assert.Equal(t, chunkSamples, sampleEvents(sink), "the profile also reached the pipeline")
		})
	}
}

func TestForwardOtherEndpoints(t *testing.T) {
	attachment := make([]byte, 3<<20)
	_, _ = rand.Read(attachment)
	tests := []struct {
		name, method, path string
		body               []byte
		headers            map[string]string
	}{
		{"store, an older SDK's error event", http.MethodPost, "/api/42/store/?sentry_key=" + testKey,
			[]byte(`{"message":"boom"}`), map[string]string{"Content-Type": "application/json"}},
		{"a binary attachment of several MB", http.MethodPost, "/api/42/attachment/9ec79c33ec9942ab8353589fcb2e04dc/?sentry_key=" + testKey,
			attachment, map[string]string{"Content-Type": "application/octet-stream"}},
		{"minidump, key in the Authorization header", http.MethodPost, "/api/42/minidump/",
			[]byte("MDMP\x93\xa7"), map[string]string{"Authorization": "Sentry sentry_key=" + testKey}},
		{"security report", http.MethodPost, "/api/42/security/?sentry_key=" + testKey,
			[]byte(`{"csp-report":{}}`), map[string]string{"Content-Type": "application/csp-report"}},
	}
	upstream := newFakeSentry(t)
	tr := startReceiver(t, new(consumertest.ProfilesSink), forwardTo(upstream.URL))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, newRequest(t, tt.method, tr.url+tt.path, tt.body, tt.headers))
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			got := upstream.got()
			require.Len(t, got, i+1)
			last := got[i]
			assert.Equal(t, tt.body, last.body)
			wantPath, wantQuery, _ := strings.Cut(tt.path, "?")
			assert.Equal(t, wantPath, last.path)
			assert.Equal(t, wantQuery, last.query)
			for k, v := range tt.headers {
				assert.Equal(t, v, last.header.Get(k), k)
			}
		})
	}
}

func TestForwardWithoutProfiles(t *testing.T) {
	upstream := newFakeSentry(t)
	sink := new(consumertest.ProfilesSink)
	tr := startReceiver(t, sink, func(c *Config) {
		forwardTo(upstream.URL)(c)
		c.ForwardProfiles = false
	})
	env := mixedEnvelope()
	resp := post(t, tr, compresstest.Bytes(t, "gzip", env), map[string]string{"Content-Encoding": "gzip"})
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Equal(t, chunkSamples, sampleEvents(sink), "profiles still reach the pipeline")

	got := upstream.got()
	require.Len(t, got, 1)
	assert.Empty(t, got[0].header.Get("Content-Encoding"), "re-serialized envelopes go uncompressed")
	want := envelopeOf(eventHeader,
		item{header: `{"type":"event"}`, payload: `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","exception":{"values":[{"type":"Error"}]}}`},
		transactionItem(linkTransaction),
		item{header: `{"type":"session"}`, payload: `{"sid":"7e7c1a4c-2b8a-4a0e-9a2e-1a2b3c4d5e6f","status":"exited"}`},
		item{header: `{"type":"client_report"}`, payload: `{"discarded_events":[]}`},
		item{header: `{"type":"replay_event"}`, payload: `{"replay_id":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}`},
	)
	assert.Equal(t, string(want), string(got[0].body), "exactly the profile items are gone")

	// An envelope without profiles goes as it came.
	plain := envelopeOf(eventHeader, item{header: `{"type":"event"}`, payload: `{}`})
	resp = post(t, tr, compresstest.Bytes(t, "gzip", plain), map[string]string{"Content-Encoding": "gzip"})
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	got = upstream.got()
	require.Len(t, got, 2)
	assert.Equal(t, compresstest.Bytes(t, "gzip", plain), got[1].body)
	assert.Equal(t, "gzip", got[1].header.Get("Content-Encoding"))
}

func TestForwardUpstreamAnswers(t *testing.T) {
	t.Run("429 and its rate limits reach the SDK", func(t *testing.T) {
		upstream := newFakeSentry(t)
		upstream.answer = func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Sentry-Rate-Limits", "60:transaction;profile_chunk:organization")
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
		}
		sink := new(consumertest.ProfilesSink)
		tr := startReceiver(t, sink, forwardTo(upstream.URL))
		resp := post(t, tr, mixedEnvelope(), nil)
		assert.Equal(t, http.StatusTooManyRequests, resp.status)
		assert.Equal(t, "60:transaction;profile_chunk:organization", resp.header.Get("X-Sentry-Rate-Limits"))
		assert.Equal(t, "60", resp.header.Get("Retry-After"))
		assert.Equal(t, chunkSamples, sampleEvents(sink), "the pipeline has the profile whatever the upstream says")
	})
	t.Run("unreachable upstream: 502 with Retry-After", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		url := dead.URL
		dead.Close()
		sink := new(consumertest.ProfilesSink)
		tr := startReceiver(t, sink, forwardTo(url))
		resp := post(t, tr, mixedEnvelope(), nil)
		assert.Equal(t, http.StatusBadGateway, resp.status, resp.body)
		assert.Equal(t, "60", resp.header.Get("Retry-After"))
		assert.NotContains(t, resp.body, testKey)
		assert.Equal(t, chunkSamples, sampleEvents(sink))
	})
	t.Run("slow upstream: 504 after the forward timeout", func(t *testing.T) {
		upstream := newFakeSentry(t)
		upstream.answer = func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
		tr := startReceiver(t, new(consumertest.ProfilesSink), func(c *Config) {
			forwardTo(upstream.URL)(c)
			c.Forward.Get().ClientConfig.Timeout = 200 * time.Millisecond
		})
		start := time.Now()
		resp := post(t, tr, mixedEnvelope(), nil)
		assert.Equal(t, http.StatusGatewayTimeout, resp.status, resp.body)
		assert.Less(t, time.Since(start), 4*time.Second)
	})
	t.Run("pipeline refusal: still forwarded, the SDK gets the upstream's answer", func(t *testing.T) {
		upstream := newFakeSentry(t)
		tr := startReceiver(t, consumertest.NewErr(errTest), forwardTo(upstream.URL))
		resp := post(t, tr, mixedEnvelope(), nil)
		assert.Equal(t, http.StatusOK, resp.status, resp.body)
		assert.Len(t, upstream.got(), 1)
	})
}

var errTest = io.ErrUnexpectedEOF

// TestForwardHostile: nothing in a request can send it anywhere but the
// configured upstream, and what the receiver refuses is not forwarded.
func TestForwardHostile(t *testing.T) {
	upstream := newFakeSentry(t)
	elsewhere := newFakeSentry(t)
	tr := startReceiver(t, new(consumertest.ProfilesSink), func(c *Config) {
		forwardTo(upstream.URL)(c)
		c.PublicKeys = append(c.PublicKeys, testKey)
	})
	tests := []struct {
		name       string
		path       string
		body       []byte
		headers    map[string]string
		wantStatus int
		forwarded  bool
	}{
		{name: "path traversal out of /api/", path: "/api/../admin/?sentry_key=" + testKey, wantStatus: http.StatusNotFound},
		{name: "encoded dots", path: "/api/%2e%2e/admin/?sentry_key=" + testKey, wantStatus: http.StatusNotFound},
		{name: "doubled slash", path: "/api//42/store/?sentry_key=" + testKey, wantStatus: http.StatusNotFound},
		{name: "unknown key", path: "/api/42/store/?sentry_key=ffffffffffffffffffffffffffffffff", wantStatus: http.StatusForbidden},
		{name: "no key", path: "/api/42/store/", wantStatus: http.StatusUnauthorized},
		{
			name: "an envelope dsn naming another host goes to the configured upstream",
			path: "/api/42/envelope/?sentry_key=" + testKey,
			body: envelopeOf(`{"dsn":"http://`+testKey+`@`+strings.TrimPrefix(elsewhere.URL, "http://")+`/42"}`,
				item{header: `{"type":"event"}`, payload: `{}`}),
			wantStatus: http.StatusOK, forwarded: true,
		},
		{
			name: "a Host header does not choose the upstream",
			path: "/api/42/store/?sentry_key=" + testKey, body: []byte(`{}`),
			headers:    map[string]string{"Host": strings.TrimPrefix(elsewhere.URL, "http://")},
			wantStatus: http.StatusOK, forwarded: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(upstream.got())
			req := newRequest(t, http.MethodPost, tr.url+tt.path, tt.body, nil)
			for k, v := range tt.headers {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			resp := do(t, req)
			assert.Equal(t, tt.wantStatus, resp.status, resp.body)
			after := len(upstream.got())
			if tt.forwarded {
				assert.Equal(t, before+1, after)
			} else {
				assert.Equal(t, before, after, "not forwarded")
			}
			assert.Empty(t, elsewhere.got(), "nothing reaches another host")
		})
	}
}

// TestForwardBodyLimit: a body over max_request_body_size is refused with
// 413 and not forwarded, whatever the endpoint.
func TestForwardBodyLimit(t *testing.T) {
	upstream := newFakeSentry(t)
	tr := startReceiver(t, new(consumertest.ProfilesSink), func(c *Config) {
		forwardTo(upstream.URL)(c)
		c.ServerConfig.MaxRequestBodySize = 1 << 20
		c.MaxProfileItemSize = 1 << 20
	})
	big := bytes.Repeat([]byte("x"), 2<<20)
	for _, path := range []string{"/api/42/store/", "/api/42/envelope/"} {
		resp := do(t, newRequest(t, http.MethodPost, tr.url+path+"?sentry_key="+testKey, big, nil))
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.status, path)
	}
	assert.Empty(t, upstream.got())
}

// TestForwardBadContentEncodings: a body whose encoding the receiver does
// not take, or whose compressed stream does not even start, is refused and
// not forwarded; one that starts and then breaks goes to the upstream, which
// may read what the receiver cannot, as every unreadable envelope does.
func TestForwardBadContentEncodings(t *testing.T) {
	env := mixedEnvelope()
	gz := compresstest.Bytes(t, "gzip", env)
	tests := []struct {
		name       string
		encoding   string
		body       []byte
		algorithms []string
		wantStatus int
		wantDetail string
		forwarded  bool
	}{
		{name: "unknown encoding", encoding: "compress", body: env, wantStatus: http.StatusUnsupportedMediaType,
			wantDetail: "unsupported Content-Encoding compress"},
		{name: "encoding not configured", encoding: "zstd", body: compresstest.Bytes(t, "zstd", env), algorithms: []string{"", "gzip"},
			wantStatus: http.StatusUnsupportedMediaType, wantDetail: "unsupported Content-Encoding zstd"},
		{name: "not gzip", encoding: "gzip", body: env, wantStatus: http.StatusBadRequest, wantDetail: "gzip: invalid header"},
		{name: "not zlib", encoding: "deflate", body: env, wantStatus: http.StatusBadRequest, wantDetail: "zlib: invalid header"},
		{name: "ends mid-gzip", encoding: "gzip", body: gz[:len(gz)/2], wantStatus: http.StatusOK, forwarded: true},
		{name: "not brotli", encoding: "br", body: env, wantStatus: http.StatusOK, forwarded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := newFakeSentry(t)
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, func(c *Config) {
				forwardTo(upstream.URL)(c)
				c.ServerConfig.CompressionAlgorithms = tt.algorithms
			})
			resp := post(t, tr, tt.body, map[string]string{"Content-Encoding": tt.encoding})
			require.Equal(t, tt.wantStatus, resp.status, "body: %s", resp.body)
			if tt.wantDetail != "" {
				assert.Equal(t, tt.wantDetail, resp.detail(t))
			}
			if tt.forwarded {
				require.Len(t, upstream.got(), 1)
				assert.Equal(t, tt.body, upstream.got()[0].body, "as it came")
			} else {
				assert.Empty(t, upstream.got(), "not forwarded")
			}
			assert.Zero(t, sink.ProfileCount())
		})
	}
}

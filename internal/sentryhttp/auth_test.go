package sentryhttp_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

func TestAuthHeader(t *testing.T) {
	assert.Equal(t,
		"Sentry sentry_version=7, sentry_client=otelcol-sentryprofile/0.1.0, sentry_key=abc",
		sentryhttp.AuthHeader("abc", "otelcol-sentryprofile/0.1.0"))
	assert.Equal(t, "Sentry sentry_version=7, sentry_key=abc", sentryhttp.AuthHeader("abc", ""))

	c, err := sentryhttp.ParseAuthHeader(sentryhttp.AuthHeader("abc", "x/1"))
	require.NoError(t, err)
	assert.Equal(t, sentryhttp.Credentials{PublicKey: "abc", Client: "x/1", Version: "7"}, c)
}

func TestParseAuthHeader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want sentryhttp.Credentials
		err  string
	}{
		{
			name: "python sdk",
			in:   "Sentry sentry_key=0123456789abcdef0123456789abcdef, sentry_version=7, sentry_client=sentry.python/2.68.0",
			want: sentryhttp.Credentials{PublicKey: "0123456789abcdef0123456789abcdef", Version: "7", Client: "sentry.python/2.68.0"},
		},
		{
			name: "no spaces and a secret",
			in:   "Sentry sentry_key=pk,sentry_secret=sk,sentry_version=7",
			want: sentryhttp.Credentials{PublicKey: "pk", SecretKey: "sk", Version: "7"},
		},
		{
			name: "extra spacing",
			in:   "  Sentry   sentry_key = pk ,  sentry_version= 7.0 ,sentry_client =c  ",
			want: sentryhttp.Credentials{PublicKey: "pk", Version: "7.0", Client: "c"},
		},
		{name: "lower-case scheme", in: "sentry sentry_key=pk", want: sentryhttp.Credentials{PublicKey: "pk"}},
		{name: "upper-case scheme", in: "SENTRY sentry_key=pk", want: sentryhttp.Credentials{PublicKey: "pk"}},
		{
			name: "unknown keys, timestamp and bare members ignored",
			in:   "Sentry sentry_timestamp=1700000000.5, foo=bar, garbage, sentry_key=pk",
			want: sentryhttp.Credentials{PublicKey: "pk"},
		},
		{name: "last key wins", in: "Sentry sentry_key=a, sentry_key=b", want: sentryhttp.Credentials{PublicKey: "b"}},
		{name: "missing key", in: "Sentry sentry_version=7, sentry_client=c", err: "sentry auth: missing sentry_key"},
		{name: "empty key", in: "Sentry sentry_key=, sentry_version=7", err: "sentry auth: missing sentry_key"},
		{name: "no members", in: "Sentry", err: "sentry auth: missing sentry_key"},
		{name: "bad version", in: "Sentry sentry_key=pk, sentry_version=seven", err: `sentry auth: invalid sentry_version "seven"`},
		{name: "other scheme", in: "Bearer abc", err: `sentry auth: not a "Sentry" auth header`},
		{name: "scheme glued to members", in: "Sentrysentry_key=pk", err: `sentry auth: not a "Sentry" auth header`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sentryhttp.ParseAuthHeader(tt.in)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCredentialsFromRequest(t *testing.T) {
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name    string
		target  string
		headers map[string]string
		want    []sentryhttp.Credentials
		err     string
	}{
		{name: "none", target: "/api/1/envelope/"},
		{
			name:    "x-sentry-auth",
			target:  "/api/1/envelope/",
			headers: map[string]string{"X-Sentry-Auth": "Sentry sentry_key=pk, sentry_version=7, sentry_client=sentry.go/0.30.0"},
			want:    []sentryhttp.Credentials{{PublicKey: "pk", Version: "7", Client: "sentry.go/0.30.0", Source: sentryhttp.SourceXSentryAuth}},
		},
		{
			name:    "authorization sentry",
			target:  "/api/1/envelope/",
			headers: map[string]string{"Authorization": "sentry sentry_key=pk"},
			want:    []sentryhttp.Credentials{{PublicKey: "pk", Source: sentryhttp.SourceAuthorization}},
		},
		{
			name:    "basic",
			target:  "/api/1/envelope/",
			headers: map[string]string{"Authorization": basic("pk:sk")},
			want:    []sentryhttp.Credentials{{PublicKey: "pk", SecretKey: "sk", Source: sentryhttp.SourceBasic}},
		},
		{
			name:    "basic with empty password, lower-case scheme",
			target:  "/api/1/envelope/",
			headers: map[string]string{"Authorization": "basic " + base64.StdEncoding.EncodeToString([]byte("pk:"))},
			want:    []sentryhttp.Credentials{{PublicKey: "pk", Source: sentryhttp.SourceBasic}},
		},
		{
			name:    "basic without colon is not sentry auth",
			target:  "/api/1/envelope/",
			headers: map[string]string{"Authorization": basic("pk")},
		},
		{
			name:    "basic that is not base64 is not sentry auth",
			target:  "/api/1/envelope/",
			headers: map[string]string{"Authorization": "Basic %%%"},
		},
		{
			name:    "bearer belongs to someone else",
			target:  "/api/1/envelope/",
			headers: map[string]string{"Authorization": "Bearer token"},
		},
		{
			name:   "query (node and browser SDKs)",
			target: "/api/1/envelope/?sentry_key=pk&sentry_version=7&sentry_client=sentry.javascript.node%2F11.1.0",
			want:   []sentryhttp.Credentials{{PublicKey: "pk", Version: "7", Client: "sentry.javascript.node/11.1.0", Source: sentryhttp.SourceQuery}},
		},
		{
			name:   "unrelated query is not auth",
			target: "/api/1/envelope/?foo=bar",
		},
		{
			name:   "query without key",
			target: "/api/1/envelope/?sentry_version=7",
			err:    "query: sentry auth: missing sentry_key",
		},
		{
			name:    "malformed x-sentry-auth",
			target:  "/api/1/envelope/",
			headers: map[string]string{"X-Sentry-Auth": "Sentry sentry_version=7"},
			err:     "X-Sentry-Auth header: sentry auth: missing sentry_key",
		},
		{
			name:    "x-sentry-auth of another scheme is ignored",
			target:  "/api/1/envelope/",
			headers: map[string]string{"X-Sentry-Auth": "Token pk"},
		},
		{
			name:    "every form at once, in order",
			target:  "/api/1/envelope/?sentry_key=q",
			headers: map[string]string{"X-Sentry-Auth": "Sentry sentry_key=x", "Authorization": "Sentry sentry_key=a"},
			want: []sentryhttp.Credentials{
				{PublicKey: "x", Source: sentryhttp.SourceXSentryAuth},
				{PublicKey: "a", Source: sentryhttp.SourceAuthorization},
				{PublicKey: "q", Source: sentryhttp.SourceQuery},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.target, nil)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			got, err := sentryhttp.CredentialsFromRequest(req)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

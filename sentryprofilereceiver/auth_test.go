package sentryprofilereceiver

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

func TestAuthForms(t *testing.T) {
	const otherKey = "fedcba9876543210fedcba9876543210"
	sentryAuth := func(key string) string {
		return "Sentry sentry_key=" + key + ", sentry_version=7, sentry_client=sentry.python/2.68.0"
	}
	basic := func(key string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"))
	}
	dsnHeader := func(key, project string) string {
		return `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"http://` + key + `@collector.example:8000/` + project + `"}`
	}
	const noHeader = `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}`

	tests := []struct {
		name       string
		project    string            // defaults to 42
		query      string            // appended to the URL
		headers    map[string]string // request headers
		envHeader  string            // envelope header line; defaults to noHeader
		publicKeys []configopaque.String
		projects   []string
		wantStatus int
		wantDetail string // for refusals
	}{
		{name: "X-Sentry-Auth", headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)}, wantStatus: http.StatusOK},
		{name: "Authorization Sentry", headers: map[string]string{"Authorization": sentryAuth(testKey)}, wantStatus: http.StatusOK},
		{name: "Authorization Basic", headers: map[string]string{"Authorization": basic(testKey)}, wantStatus: http.StatusOK},
		{name: "query", query: "?sentry_key=" + testKey + "&sentry_version=7", wantStatus: http.StatusOK},
		{name: "envelope dsn", envHeader: dsnHeader(testKey, "42"), wantStatus: http.StatusOK},
		{
			name: "same key in header, query and dsn", query: "?sentry_key=" + testKey,
			headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)}, envHeader: dsnHeader(testKey, "42"),
			wantStatus: http.StatusOK,
		},
		{
			name: "configured key", headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			publicKeys: []configopaque.String{otherKey, testKey}, wantStatus: http.StatusOK,
		},
		{
			name: "configured project", headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			projects: []string{"7", "42"}, wantStatus: http.StatusOK,
		},
		{name: "missing", wantStatus: http.StatusUnauthorized, wantDetail: "missing authorization information"},
		{
			name: "conflicting header and query", query: "?sentry_key=" + otherKey,
			headers:    map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			wantStatus: http.StatusBadRequest, wantDetail: "multiple authorization payloads",
		},
		{
			name: "conflicting header and dsn", headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			envHeader: dsnHeader(otherKey, "42"), wantStatus: http.StatusBadRequest, wantDetail: "multiple authorization payloads",
		},
		{
			name: "wrong key", headers: map[string]string{"X-Sentry-Auth": sentryAuth(otherKey)},
			publicKeys: []configopaque.String{testKey}, wantStatus: http.StatusForbidden, wantDetail: "unknown public key",
		},
		{
			name: "wrong key by dsn", envHeader: dsnHeader(otherKey, "42"),
			publicKeys: []configopaque.String{testKey}, wantStatus: http.StatusForbidden, wantDetail: "unknown public key",
		},
		{
			name: "key prefix is not the key", query: "?sentry_key=" + testKey[:31],
			publicKeys: []configopaque.String{testKey}, wantStatus: http.StatusForbidden, wantDetail: "unknown public key",
		},
		{
			name: "unknown project", project: "43", headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			projects: []string{"42"}, wantStatus: http.StatusForbidden, wantDetail: "project 43 is not accepted here",
		},
		{
			name: "dsn for another project", envHeader: dsnHeader(testKey, "7"),
			wantStatus: http.StatusBadRequest, wantDetail: "envelope dsn is for project 7, not 42",
		},
		// One rule for project ids everywhere: leading zeros do not change
		// the number (Relay reads 007 as 7), and 0 is no project.
		{
			name: "leading zeros in the URL, the dsn and the configuration", project: "0042",
			headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)}, envHeader: dsnHeader(testKey, "042"),
			projects: []string{"00042"}, wantStatus: http.StatusOK,
		},
		{
			name: "leading zeros name the same project", project: "0043",
			headers:  map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			projects: []string{"042"}, wantStatus: http.StatusForbidden, wantDetail: "project 43 is not accepted here",
		},
		{
			name: "project zero", project: "0", headers: map[string]string{"X-Sentry-Auth": sentryAuth(testKey)},
			wantStatus: http.StatusNotFound, wantDetail: "not found; the project id is numeric",
		},
		{
			name: "dsn for project zero", envHeader: dsnHeader(testKey, "0"),
			wantStatus: http.StatusBadRequest, wantDetail: "invalid dsn in envelope header",
		},
		{
			name: "malformed dsn", envHeader: `{"dsn":"not a dsn"}`,
			wantStatus: http.StatusBadRequest, wantDetail: "invalid dsn in envelope header",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, func(c *Config) {
				c.PublicKeys = tt.publicKeys
				c.Projects = tt.projects
			})
			project := tt.project
			if project == "" {
				project = "42"
			}
			envHeader := tt.envHeader
			if envHeader == "" {
				envHeader = noHeader
			}
			body := envelopeOf(envHeader, chunkItem(chunkPayload))
			resp := do(t, newRequest(t, http.MethodPost, tr.url+"/api/"+project+"/envelope/"+tt.query, body, tt.headers))

			require.Equal(t, tt.wantStatus, resp.status, "body: %s", resp.body)
			if tt.wantStatus != http.StatusOK {
				assert.Equal(t, tt.wantDetail, resp.detail(t))
				assert.Zero(t, sink.ProfileCount(), "a refused envelope reaches no one")
				assert.NotContains(t, resp.body, testKey)
				assert.NotContains(t, resp.body, otherKey)
				return
			}
			assert.JSONEq(t, `{"id":"9ec79c33ec9942ab8353589fcb2e04dc"}`, resp.body)
			assert.Equal(t, chunkSamples, sampleEvents(sink))
		})
	}
}

func TestAcceptsKeyComparesWholeKeys(t *testing.T) {
	a := newAuthenticator(&Config{PublicKeys: []configopaque.String{"abc", "0123456789abcdef0123456789abcdef"}})
	tests := []struct {
		key  string
		want bool
	}{
		{"abc", true},
		{"0123456789abcdef0123456789abcdef", true},
		{"ab", false},
		{"abcd", false},
		{"ABC", false},
		{"", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, a.acceptsKey(tt.key), "key %q", tt.key)
	}
	assert.True(t, newAuthenticator(&Config{}).acceptsKey("anything"), "no keys configured accepts any key")
}

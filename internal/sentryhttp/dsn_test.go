package sentryhttp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     sentryhttp.DSN
		envelope string
		redacted string
		err      string
	}{
		{
			name:     "sentry.io",
			in:       "https://e12d836b15bb49d7bbf99e64295d995b@o1.ingest.sentry.io/42",
			want:     sentryhttp.DSN{Scheme: "https", PublicKey: "e12d836b15bb49d7bbf99e64295d995b", Host: "o1.ingest.sentry.io", ProjectID: "42"},
			envelope: "https://o1.ingest.sentry.io/api/42/envelope/",
			redacted: "https://e12d…@o1.ingest.sentry.io/42",
		},
		{
			name:     "port and path prefix",
			in:       "http://public@localhost:9000/sentry/relay/7",
			want:     sentryhttp.DSN{Scheme: "http", PublicKey: "public", Host: "localhost:9000", Path: "/sentry/relay", ProjectID: "7"},
			envelope: "http://localhost:9000/sentry/relay/api/7/envelope/",
			redacted: "http://pub…@localhost:9000/sentry/relay/7",
		},
		{
			name:     "legacy secret",
			in:       "https://e12d836b15bb49d7bbf99e64295d995b:0123456789abcdef@sentry.example.com/99",
			want:     sentryhttp.DSN{Scheme: "https", PublicKey: "e12d836b15bb49d7bbf99e64295d995b", SecretKey: "0123456789abcdef", Host: "sentry.example.com", ProjectID: "99"},
			envelope: "https://sentry.example.com/api/99/envelope/",
			redacted: "https://e12d…@sentry.example.com/99",
		},
		{
			name:     "empty secret",
			in:       "https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42",
			want:     sentryhttp.DSN{Scheme: "https", PublicKey: "e12d836b15bb49d7bbf99e64295d995b", Host: "sentry.io", ProjectID: "42"},
			envelope: "https://sentry.io/api/42/envelope/",
			redacted: "https://e12d…@sentry.io/42",
		},
		{
			name:     "ipv6 host with port",
			in:       "http://abc123@[::1]:8000/3",
			want:     sentryhttp.DSN{Scheme: "http", PublicKey: "abc123", Host: "[::1]:8000", ProjectID: "3"},
			envelope: "http://[::1]:8000/api/3/envelope/",
			redacted: "http://abc…@[::1]:8000/3",
		},
		{
			name:     "project id with leading zeros is the number",
			in:       "https://key12345@h.example/007",
			want:     sentryhttp.DSN{Scheme: "https", PublicKey: "key12345", Host: "h.example", ProjectID: "7"},
			envelope: "https://h.example/api/7/envelope/",
			redacted: "https://key1…@h.example/7",
		},
		{
			name:     "query and fragment ignored",
			in:       "https://key12345@h.example/5?timeout=3#x",
			want:     sentryhttp.DSN{Scheme: "https", PublicKey: "key12345", Host: "h.example", ProjectID: "5"},
			envelope: "https://h.example/api/5/envelope/",
			redacted: "https://key1…@h.example/5",
		},
		{name: "empty", in: "  ", err: "sentry dsn: empty"},
		{name: "bad scheme", in: "ftp://k@h/1", err: `sentry dsn: scheme "ftp" is not http or https`},
		{name: "no scheme", in: "k@h/1", err: `sentry dsn: scheme "" is not http or https`},
		{name: "opaque", in: "https:k@h/1", err: "sentry dsn: missing // after the scheme"},
		{name: "missing key", in: "https://sentry.io/42", err: "sentry dsn: missing public key (the part before @)"},
		{name: "empty key", in: "https://:secret@sentry.io/42", err: "sentry dsn: missing public key (the part before @)"},
		{name: "missing host", in: "https://k@/42", err: "sentry dsn: missing host"},
		{name: "missing project id", in: "https://k@sentry.io", err: "sentry dsn: missing project id (the last path segment)"},
		{name: "trailing slash", in: "https://k@sentry.io/42/", err: "sentry dsn: missing project id (the last path segment)"},
		{name: "project id not a number", in: "https://k@sentry.io/proj", err: `sentry dsn: project id "proj" is not a positive number`},
		{name: "project zero", in: "https://k@sentry.io/0", err: `sentry dsn: project id "0" is not a positive number`},
		{name: "project id over 64 bits", in: "https://k@sentry.io/18446744073709551616", err: `sentry dsn: project id "18446744073709551616" is not a positive number`},
		{name: "bad port", in: "https://k:topsecret@sentry.io:port/42", err: `sentry dsn: not a URL: invalid port ":port" after host`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sentryhttp.ParseDSN(tt.in)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				assert.NotContains(t, err.Error(), "topsecret", "errors never quote the secret")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.envelope, got.EnvelopeURL())
			assert.Equal(t, tt.redacted, got.String())
		})
	}
}

func TestDSNStringNeverShowsKeys(t *testing.T) {
	for _, key := range []string{"a", "ab", "abc", "abcd", "abcdefgh", "e12d836b15bb49d7bbf99e64295d995b", "ключключ"} {
		d := sentryhttp.DSN{Scheme: "https", PublicKey: key, SecretKey: "s3cr3t-value", Host: "h", ProjectID: "1"}
		s := d.String()
		assert.NotContains(t, s, "s3cr3t-value")
		assert.NotContains(t, s, key+"@", "the full public key must not appear")
		assert.True(t, strings.HasPrefix(s, "https://"), s)
		assert.Contains(t, s, "…@h/1")
	}
	assert.Empty(t, sentryhttp.DSN{}.String())
}

func TestCanonicalProjectID(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"42", "42", true},
		{"007", "7", true},
		{"18446744073709551615", "18446744073709551615", true},
		{"0", "", false},
		{"000", "", false},
		{"18446744073709551616", "", false},
		{"", "", false},
		{"+7", "", false},
		{"-7", "", false},
		{"1_000", "", false},
		{"0x10", "", false},
		{" 7", "", false},
		{"backend", "", false},
	}
	for _, tt := range tests {
		got, ok := sentryhttp.CanonicalProjectID(tt.in)
		assert.Equal(t, tt.ok, ok, "%q", tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
	}
}

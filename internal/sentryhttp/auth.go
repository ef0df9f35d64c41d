package sentryhttp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// HTTP header names of the protocol.
const (
	HeaderAuth       = "X-Sentry-Auth"
	HeaderRateLimits = "X-Sentry-Rate-Limits"
)

// Where a Credentials came from.
const (
	SourceXSentryAuth   = "x-sentry-auth" // X-Sentry-Auth: Sentry …
	SourceAuthorization = "authorization" // Authorization: Sentry …
	SourceBasic         = "basic"         // Authorization: Basic base64(public_key:…)
	SourceQuery         = "query"         // ?sentry_key=…&sentry_version=…
	SourceDSN           = "dsn"           // the envelope header's "dsn"
)

// Credentials is one form of authentication found in a request.
type Credentials struct {
	PublicKey string // sentry_key
	SecretKey string // sentry_secret (legacy), or the password of Basic auth
	Client    string // sentry_client, the SDK's user agent
	Version   string // sentry_version as sent ("7", "7.0"); empty when absent
	Source    string // one of the Source constants
}

// AuthHeader returns the X-Sentry-Auth value an SDK sends:
// "Sentry sentry_version=7, sentry_client=<client>, sentry_key=<publicKey>".
// sentry_client is left out when client is empty.
func AuthHeader(publicKey, client string) string {
	var b strings.Builder
	b.WriteString("Sentry sentry_version=" + ProtocolVersion)
	if client != "" {
		b.WriteString(", sentry_client=" + client)
	}
	b.WriteString(", sentry_key=" + publicKey)
	return b.String()
}

// ParseAuthHeader parses "Sentry k=v, k=v, …" as Relay does: the scheme is
// case-insensitive, members are split on "," and trimmed, members without "="
// and unknown keys are ignored. sentry_key is required; sentry_version, when
// present, must start with an integer ("7", "7.0"). Source is left empty for
// the caller to set.
func ParseAuthHeader(v string) (Credentials, error) {
	scheme, params, _ := strings.Cut(strings.TrimSpace(v), " ")
	if !strings.EqualFold(scheme, "sentry") {
		return Credentials{}, errors.New(`sentry auth: not a "Sentry" auth header`)
	}
	var pairs [][2]string
	for member := range strings.SplitSeq(params, ",") {
		key, value, ok := strings.Cut(member, "=")
		if !ok {
			continue
		}
		pairs = append(pairs, [2]string{strings.TrimSpace(key), strings.TrimSpace(value)})
	}
	return credentialsFromPairs(pairs)
}

// credentialsFromPairs applies the sentry_* keys shared by the header and
// query forms.
func credentialsFromPairs(pairs [][2]string) (Credentials, error) {
	var c Credentials
	for _, kv := range pairs {
		switch kv[0] {
		case "sentry_key":
			c.PublicKey = kv[1]
		case "sentry_secret":
			c.SecretKey = kv[1]
		case "sentry_client":
			c.Client = kv[1]
		case "sentry_version":
			major, _, _ := strings.Cut(kv[1], ".")
			if _, err := strconv.ParseUint(major, 10, 16); err != nil {
				return Credentials{}, fmt.Errorf("sentry auth: invalid sentry_version %q", kv[1])
			}
			c.Version = kv[1]
		}
	}
	if c.PublicKey == "" {
		return Credentials{}, errors.New("sentry auth: missing sentry_key")
	}
	return c, nil
}

// CredentialsFromRequest returns every form of Sentry authentication present
// in the request headers and query, in the order X-Sentry-Auth,
// Authorization (Sentry or Basic), query. The caller adds the envelope's dsn
// form and decides what several forms mean (Relay rejects them as "multiple
// auth").
//
// As in Relay, an X-Sentry-Auth or Authorization value that is not of the
// Sentry scheme is not Sentry auth and is skipped (Authorization may belong
// to the collector's own authenticator), and so is a Basic value that does
// not decode to "key:…". A Sentry-scheme value or sentry_* query that is
// malformed is an error; the forms parsed before it are returned with it.
func CredentialsFromRequest(r *http.Request) ([]Credentials, error) {
	var found []Credentials
	for _, h := range [...]struct{ name, source string }{
		{HeaderAuth, SourceXSentryAuth},
		{"Authorization", SourceAuthorization},
	} {
		v := strings.TrimSpace(r.Header.Get(h.name))
		if !hasSchemePrefix(v, "sentry") {
			continue
		}
		c, err := ParseAuthHeader(v)
		if err != nil {
			return found, fmt.Errorf("%s header: %w", h.name, err)
		}
		c.Source = h.source
		found = append(found, c)
	}

	if c, ok := basicCredentials(r.Header.Get("Authorization")); ok {
		found = append(found, c)
	}

	if r.URL != nil && strings.Contains(r.URL.RawQuery, "sentry_") {
		c, err := credentialsFromPairs(queryPairs(r.URL.RawQuery))
		if err != nil {
			return found, fmt.Errorf("query: %w", err)
		}
		c.Source = SourceQuery
		found = append(found, c)
	}
	return found, nil
}

// queryPairs splits a query in order (url.Values is a map and would make a
// repeated key ambiguous); the last of a repeated key wins, as in Relay.
// Undecodable members are skipped.
func queryPairs(raw string) [][2]string {
	var pairs [][2]string
	for member := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(member, "=")
		key, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || key == "" {
			continue
		}
		pairs = append(pairs, [2]string{key, value})
	}
	return pairs
}

func basicCredentials(v string) (Credentials, bool) {
	v = strings.TrimSpace(v)
	if !hasSchemePrefix(v, "basic") {
		return Credentials{}, false
	}
	decoded, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v[len("basic "):]))
	if err != nil {
		return Credentials{}, false
	}
	key, secret, ok := strings.Cut(string(decoded), ":")
	if !ok || key == "" {
		return Credentials{}, false
	}
	return Credentials{PublicKey: key, SecretKey: secret, Source: SourceBasic}, true
}

// hasSchemePrefix reports whether v starts with scheme and a space, ignoring
// case.
func hasSchemePrefix(v, scheme string) bool {
	return len(v) > len(scheme) && v[len(scheme)] == ' ' && strings.EqualFold(v[:len(scheme)], scheme)
}

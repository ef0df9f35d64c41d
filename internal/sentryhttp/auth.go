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
		if err := c.set(kv[0], kv[1]); err != nil {
			return Credentials{}, err
		}
	}
	if c.PublicKey == "" {
		return Credentials{}, errors.New("sentry auth: missing sentry_key")
	}
	return c, nil
}

// set applies one sentry_* key; other keys are ignored.
func (c *Credentials) set(key, value string) error {
	switch key {
	case "sentry_key":
		c.PublicKey = value
	case "sentry_secret":
		c.SecretKey = value
	case "sentry_client":
		c.Client = value
	case "sentry_version":
		major, _, _ := strings.Cut(value, ".")
		if _, err := strconv.ParseUint(major, 10, 16); err != nil {
			return fmt.Errorf("sentry auth: invalid sentry_version %q", value)
		}
		c.Version = value
	}
	return nil
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
	found, err := sentrySchemeHeaders(r.Header)
	if err != nil {
		return found, err
	}
	if c, ok := basicCredentials(r.Header.Get("Authorization")); ok {
		found = append(found, c)
	}
	c, ok, err := queryCredentials(r.URL)
	if err != nil {
		return found, err
	}
	if ok {
		found = append(found, c)
	}
	return found, nil
}

// sentrySchemeHeaders reads the "Sentry …" values of X-Sentry-Auth and
// Authorization.
func sentrySchemeHeaders(header http.Header) ([]Credentials, error) {
	var found []Credentials
	for _, h := range [...]struct{ name, source string }{
		{HeaderAuth, SourceXSentryAuth},
		{"Authorization", SourceAuthorization},
	} {
		v := strings.TrimSpace(header.Get(h.name))
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
	return found, nil
}

// queryCredentials reads the sentry_* members of a query; false when there
// are none.
func queryCredentials(u *url.URL) (Credentials, bool, error) {
	if u == nil || !strings.Contains(u.RawQuery, "sentry_") {
		return Credentials{}, false, nil
	}
	c, err := credentialsFromPairs(queryPairs(u.RawQuery))
	if err != nil {
		return Credentials{}, false, fmt.Errorf("query: %w", err)
	}
	c.Source = SourceQuery
	return c, true, nil
}

// queryPairs splits a query in order (url.Values is a map and would make a
// repeated key ambiguous); the last of a repeated key wins, as in Relay.
// Undecodable members are skipped.
func queryPairs(raw string) [][2]string {
	var pairs [][2]string
	for member := range strings.SplitSeq(raw, "&") {
		if key, value, ok := queryPair(member); ok {
			pairs = append(pairs, [2]string{key, value})
		}
	}
	return pairs
}

// queryPair decodes "key=value"; false when it does not decode or has no
// key.
func queryPair(member string) (string, string, bool) {
	k, v, _ := strings.Cut(member, "=")
	key, err := url.QueryUnescape(k)
	if err != nil || key == "" {
		return "", "", false
	}
	value, err := url.QueryUnescape(v)
	return key, value, err == nil
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

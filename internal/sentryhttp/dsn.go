// Package sentryhttp holds the pieces of Sentry's HTTP ingestion protocol that
// both ends of this project need: DSNs and the envelope endpoint they name,
// the auth header and its other forms, and the rate limits Sentry answers
// with. The rules follow Relay, Sentry's ingestion server.
package sentryhttp

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ProtocolVersion is the sentry_version this project speaks and sends.
const ProtocolVersion = "7"

// DSN is a parsed Sentry DSN:
//
//	{scheme}://{public_key}[:{secret_key}]@{host}[:{port}]{path}/{project_id}
type DSN struct {
	Scheme    string // "http" or "https"
	PublicKey string
	SecretKey string // legacy; empty in current DSNs
	Host      string // host and optional port as in the DSN, IPv6 literals in brackets
	Path      string // prefix before the project id, without a trailing slash ("" or "/sentry")
	ProjectID string // as CanonicalProjectID returns it
}

// ParseDSN parses a DSN. A query or fragment is ignored, as the SDKs do.
// Errors never quote the DSN: it holds a key.
func ParseDSN(s string) (DSN, error) {
	if strings.TrimSpace(s) == "" {
		return DSN{}, errors.New("sentry dsn: empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the whole input, key included: keep only the cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return DSN{}, fmt.Errorf("sentry dsn: not a URL: %w", err)
	}
	if err := checkDSNParts(u); err != nil {
		return DSN{}, err
	}
	prefix, projectID, err := splitProjectPath(u.EscapedPath())
	if err != nil {
		return DSN{}, err
	}
	secret, _ := u.User.Password()
	return DSN{
		Scheme:    u.Scheme,
		PublicKey: u.User.Username(),
		SecretKey: secret,
		Host:      u.Host,
		Path:      prefix,
		ProjectID: projectID,
	}, nil
}

// checkDSNParts requires an http(s) URL with a public key and a host.
func checkDSNParts(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("sentry dsn: scheme %q is not http or https", u.Scheme)
	case u.Opaque != "":
		return errors.New("sentry dsn: missing // after the scheme")
	case u.User == nil || u.User.Username() == "":
		return errors.New("sentry dsn: missing public key (the part before @)")
	case u.Hostname() == "":
		return errors.New("sentry dsn: missing host")
	}
	return nil
}

// splitProjectPath splits a DSN's path into the prefix before the project
// id and the canonical project id, its last segment.
func splitProjectPath(path string) (prefix, projectID string, err error) {
	slash := strings.LastIndexByte(path, '/')
	if slash < 0 || slash == len(path)-1 {
		return "", "", errors.New("sentry dsn: missing project id (the last path segment)")
	}
	projectID, ok := CanonicalProjectID(path[slash+1:])
	if !ok {
		return "", "", fmt.Errorf("sentry dsn: project id %q is not a positive number", path[slash+1:])
	}
	return path[:slash], projectID, nil
}

// EnvelopeURL returns the endpoint envelopes for this DSN are posted to:
// {scheme}://{host}{path}/api/{project_id}/envelope/.
func (d DSN) EnvelopeURL() string {
	return d.Scheme + "://" + d.Host + d.Path + "/api/" + d.ProjectID + "/envelope/"
}

// String returns the DSN redacted for logs: no secret key, and the public
// key cut to a prefix that identifies it to a human without disclosing it,
// as in "https://abcd…@o1.ingest.sentry.io/42". The zero DSN is "".
func (d DSN) String() string {
	if d == (DSN{}) {
		return ""
	}
	return d.Scheme + "://" + shortKey(d.PublicKey) + "@" + d.Host + d.Path + "/" + d.ProjectID
}

// shortKey keeps at most 4 leading characters, and never more than half of
// a short key, so the whole key is never shown.
func shortKey(key string) string {
	keep := min(4, utf8.RuneCountInString(key)/2)
	i := 0
	for range keep {
		_, size := utf8.DecodeRuneInString(key[i:])
		i += size
	}
	return key[:i] + "…"
}

// CanonicalProjectID returns a project id as Sentry prints it: a positive
// decimal number without leading zeros. Relay's routes take the digits and
// read them as a number, so "007" is project 7. False for anything but
// decimal digits, for 0 (no Sentry project has it) and for a number over 64
// bits. Every project id the receiver compares (URL, envelope dsn,
// configuration) goes through this one rule.
func CanonicalProjectID(s string) (string, bool) {
	if !isDigits(s) {
		return "", false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return "", false
	}
	return strconv.FormatUint(n, 10), true
}

func isDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, notDigit) < 0
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

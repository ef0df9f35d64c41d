package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

// authenticator decides whether an envelope may enter the pipeline, with the
// answers Relay gives: 401 when no key is presented or a form is unreadable,
// 400 when the forms disagree with each other or with the URL, 403 when the
// key or the project is not accepted.
type authenticator struct {
	// keyDigests are SHA-256 digests of the accepted public keys. Comparing
	// digests of equal length keeps the comparison constant-time and leaks
	// neither the keys' contents nor their lengths. Empty accepts any key.
	keyDigests [][sha256.Size]byte
	// projects are the accepted project ids; empty accepts any project.
	projects map[string]struct{}
}

func newAuthenticator(cfg *Config) *authenticator {
	a := &authenticator{projects: acceptedProjects(cfg.Projects)}
	for _, k := range cfg.PublicKeys {
		a.keyDigests = append(a.keyDigests, sha256.Sum256([]byte(k)))
	}
	return a
}

// acceptedProjects is the set of canonical project ids; nil accepts any.
func acceptedProjects(projects []string) map[string]struct{} {
	if len(projects) == 0 {
		return nil
	}
	ids := make(map[string]struct{}, len(projects))
	for _, p := range projects {
		if id, ok := sentryhttp.CanonicalProjectID(p); ok { // Validate refused the others
			ids[id] = struct{}{}
		}
	}
	return ids
}

// authenticate checks every credential form of the request together with the
// envelope header's dsn (empty when absent) for the project in the URL.
// The returned error never contains a key, so it is safe to answer and log.
func (a *authenticator) authenticate(r *http.Request, envelopeDSN, projectID string) *requestError {
	creds, err := sentryhttp.CredentialsFromRequest(r)
	if err != nil {
		// The parser's message may quote the header, keys included: it stays
		// out of the response and the logs.
		return &requestError{status: http.StatusUnauthorized, detail: "invalid authorization information"}
	}
	if envelopeDSN != "" {
		dsnCreds, rerr := envelopeCredentials(envelopeDSN, projectID)
		if rerr != nil {
			return rerr
		}
		creds = append(creds, dsnCreds)
	}
	key, rerr := onePublicKey(creds)
	if rerr != nil {
		return rerr
	}
	return a.admit(key, projectID)
}

// envelopeCredentials reads the envelope header's dsn, which must name the
// project of the URL.
func envelopeCredentials(envelopeDSN, projectID string) (sentryhttp.Credentials, *requestError) {
	dsn, err := sentryhttp.ParseDSN(envelopeDSN)
	if err != nil {
		return sentryhttp.Credentials{}, &requestError{status: http.StatusBadRequest, detail: "invalid dsn in envelope header"}
	}
	// A DSN names one project; an envelope posted to another project's
	// URL is a client bug (or an attempt to borrow a key), not a
	// permission question, so it is malformed rather than forbidden.
	if dsn.ProjectID != projectID {
		return sentryhttp.Credentials{}, &requestError{status: http.StatusBadRequest, detail: "envelope dsn is for project " + dsn.ProjectID + ", not " + projectID}
	}
	return sentryhttp.Credentials{PublicKey: dsn.PublicKey, SecretKey: dsn.SecretKey, Source: sentryhttp.SourceDSN}, nil
}

// onePublicKey is the key every form presents: at least one form, all of
// the same key, not empty.
func onePublicKey(creds []sentryhttp.Credentials) (string, *requestError) {
	if len(creds) == 0 {
		return "", &requestError{status: http.StatusUnauthorized, detail: "missing authorization information"}
	}
	key := creds[0].PublicKey
	for _, c := range creds[1:] {
		if c.PublicKey != key {
			return "", &requestError{status: http.StatusBadRequest, detail: "multiple authorization payloads"}
		}
	}
	if key == "" {
		return "", &requestError{status: http.StatusUnauthorized, detail: "missing public key (sentry_key)"}
	}
	return key, nil
}

// admit checks the key and the project against the configured ones.
func (a *authenticator) admit(key, projectID string) *requestError {
	if !a.acceptsKey(key) {
		return &requestError{status: http.StatusForbidden, detail: "unknown public key"}
	}
	if !a.acceptsProject(projectID) {
		return &requestError{status: http.StatusForbidden, detail: "project " + projectID + " is not accepted here"}
	}
	return nil
}

// needsEnvelopeDSN reports whether only an envelope header's dsn can
// authenticate r: its headers and query carry no Sentry credentials, nor
// any unreadable ones (which authenticate refuses without a body).
func needsEnvelopeDSN(r *http.Request) bool {
	creds, err := sentryhttp.CredentialsFromRequest(r)
	return err == nil && len(creds) == 0
}

func (a *authenticator) acceptsKey(key string) bool {
	if len(a.keyDigests) == 0 {
		return true
	}
	digest := sha256.Sum256([]byte(key))
	// Every configured key is compared, so the time taken does not tell
	// which one (if any) matched.
	match := 0
	for i := range a.keyDigests {
		match |= subtle.ConstantTimeCompare(digest[:], a.keyDigests[i][:])
	}
	return match == 1
}

func (a *authenticator) acceptsProject(projectID string) bool {
	if len(a.projects) == 0 {
		return true
	}
	_, ok := a.projects[projectID]
	return ok
}

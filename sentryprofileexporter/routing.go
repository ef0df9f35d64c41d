package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

// project is one Sentry destination: everything needed to post an envelope
// to it, and the rate limits it announced. Resources routed to the same DSN
// share one project, so that a limit learnt from one resource holds back the
// others.
type project struct {
	name        string // sentryhttp.DSN.String(): redacted, the only form that is logged
	envelopeURL string
	auth        string // X-Sentry-Auth value
	envelopeDSN string // envelope header `dsn`: the DSN without its secret
	limits      *sentryhttp.RateLimits
	// redactor blanks the DSN's key and secret out of text that came back
	// from the server, before it reaches an error or a log line.
	redactor *strings.Replacer
}

// router picks the project of a resource.
type router struct {
	attribute string
	byValue   map[string]*project
	fallback  *project // nil when no default DSN is configured
}

func newRouter(cfg *Config, client string) (*router, error) {
	projects := map[string]*project{}
	projectOf := func(raw string) (*project, error) {
		if p, ok := projects[raw]; ok {
			return p, nil
		}
		dsn, err := sentryhttp.ParseDSN(raw)
		if err != nil {
			return nil, err
		}
		p := &project{
			name:        dsn.String(),
			envelopeURL: dsn.EnvelopeURL(),
			auth:        sentryhttp.AuthHeader(dsn.PublicKey, client),
			envelopeDSN: publicDSN(dsn),
			limits:      &sentryhttp.RateLimits{},
			redactor:    newRedactor(dsn),
		}
		projects[raw] = p
		return p, nil
	}

	r := &router{attribute: cfg.Routing.Attribute, byValue: make(map[string]*project, len(cfg.Routing.DSNs))}
	if cfg.DSN != "" {
		p, err := projectOf(string(cfg.DSN))
		if err != nil {
			return nil, fmt.Errorf("dsn: %w", err)
		}
		r.fallback = p
	}
	for value, raw := range cfg.Routing.DSNs {
		p, err := projectOf(string(raw))
		if err != nil {
			return nil, fmt.Errorf("routing::dsns::%s: %w", value, err)
		}
		r.byValue[value] = p
	}
	return r, nil
}

// route returns the project of a resource, or nil when neither a routing
// entry nor a default DSN covers it.
func (r *router) route(res pcommon.Resource) *project {
	if len(r.byValue) > 0 {
		if v, ok := res.Attributes().Get(r.attribute); ok {
			if p, ok := r.byValue[v.AsString()]; ok {
				return p
			}
		}
	}
	return r.fallback
}

// publicDSN is the DSN without its secret key. Relay reads the envelope `dsn`
// header only for the public key and project, and the legacy secret has no
// business travelling in a payload that proxies may log.
func publicDSN(d sentryhttp.DSN) string {
	return d.Scheme + "://" + d.PublicKey + "@" + d.Host + d.Path + "/" + d.ProjectID
}

// newRedactor replaces the DSN's public key and secret with "[redacted]":
// a proxy in front of Sentry may echo request headers in its error pages.
func newRedactor(d sentryhttp.DSN) *strings.Replacer {
	var pairs []string
	for _, secret := range []string{d.SecretKey, d.PublicKey} {
		if secret != "" {
			pairs = append(pairs, secret, "[redacted]")
		}
	}
	return strings.NewReplacer(pairs...)
}

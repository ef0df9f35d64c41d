package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

const (
	contentTypeEnvelope = "application/x-sentry-envelope"

	// maxErrorBodyBytes is how much of a failed response makes it into the
	// error: enough for Relay's {"detail":…} answers, bounded for logs.
	maxErrorBodyBytes = 1 << 10
	// maxDrainBytes is how much of a response is read to let the connection
	// be reused; a larger body costs more than a new connection.
	maxDrainBytes = 64 << 10

	// defaultRateLimitDelay is what Sentry means by a 429 that names no delay.
	defaultRateLimitDelay = 60 * time.Second
)

// delivery is the outcome of posting one envelope.
type delivery struct {
	err         error         // nil when Sentry accepted the envelope
	permanent   bool          // resending the same envelope cannot succeed
	reason      string        // of a permanent failure, when not reasonRejected
	rateLimited bool          // 429: the project's limits now say which categories wait
	delay       time.Duration // how long Sentry asked us to wait, 0 if it did not
}

// post sends one envelope to a project and maps Sentry's answer to what the
// exporterhelper retry logic needs. The project's rate limits are updated
// from every response, including successful ones.
func (e *sentryExporter) post(ctx context.Context, p *project, category string, body []byte) delivery {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.envelopeURL, bytes.NewReader(body))
	if err != nil {
		return delivery{err: fmt.Errorf("envelope for %s: %w", p.name, err), permanent: true}
	}
	req.Header.Set("Content-Type", contentTypeEnvelope)
	req.Header.Set(sentryhttp.HeaderAuth, p.auth)
	req.Header.Set("User-Agent", e.userAgent)

	resp, err := e.client.Do(req)
	if err != nil {
		return delivery{err: fmt.Errorf("envelope to %s: %w", p.name, err)}
	}
	defer func() {
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrainBytes)
		_ = resp.Body.Close()
	}()

	now := time.Now()
	p.limits.Update(resp.StatusCode, resp.Header, now)
	return e.deliveryOf(p, category, resp, now)
}

// deliveryOf maps Sentry's status: accepted, redirected, rate limited
// (the wait of the category), failing (a 5xx, with Relay's Retry-After
// when it sheds load) or refused for good.
func (e *sentryExporter) deliveryOf(p *project, category string, resp *http.Response, now time.Time) delivery {
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return delivery{}
	case code >= 300 && code <= 399:
		return e.redirected(p, resp)
	case code == http.StatusTooManyRequests:
		return delivery{err: e.statusError(p, resp), rateLimited: true, delay: rateLimitDelay(p, category, now)}
	case code >= 500:
		delay, _ := sentryhttp.ParseRetryAfter(resp.Header.Get(sentryhttp.HeaderRetryAfter), now)
		return delivery{err: e.statusError(p, resp), delay: delay}
	default:
		// 4xx other than 429 means this envelope will never be accepted:
		// bad payload (400), bad or revoked key (401/403), too large (413).
		return delivery{err: e.statusError(p, resp), permanent: true}
	}
}

// rateLimitDelay is how long category waits after a 429: what the
// project's limits say, else defaultRateLimitDelay.
func rateLimitDelay(p *project, category string, now time.Time) time.Duration {
	if delay := p.limits.RetryAfter(category, now); delay > 0 {
		return delay
	}
	return defaultRateLimitDelay
}

func (e *sentryExporter) statusError(p *project, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes+1))
	truncated := len(body) > maxErrorBodyBytes
	if truncated {
		body = body[:maxErrorBodyBytes]
	}
	msg := p.redactor.Replace(strings.TrimSpace(string(body)))
	if truncated {
		msg += "…"
	}
	if msg == "" {
		return fmt.Errorf("envelope to %s: HTTP %d", p.name, resp.StatusCode)
	}
	return fmt.Errorf("envelope to %s: HTTP %d: %s", p.name, resp.StatusCode, msg)
}

// refuseRedirects makes client hand back a redirect instead of following
// it. The envelope URL comes from the DSN alone: following a Location would
// POST the envelope, with its X-Sentry-Auth, to a host nobody configured,
// and a 302 or 303 would turn the POST into a GET without a body whose 200
// would count the chunks as sent. It is set on the client ToClient built,
// so that it holds whatever confighttp adds.
func refuseRedirects(client *http.Client) {
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
}

// redirected maps a redirect from the Sentry endpoint. 301 and 308 say the
// endpoint moved for good: the DSN must change, so resending cannot help
// and the chunks are dropped (counted as redirected). Other redirects (302,
// 303, 307: a proxy's maintenance or login page) may pass: the envelope is
// retried like after a 5xx. The error names the redirect's host, never its
// query, which may echo the key.
func (e *sentryExporter) redirected(p *project, resp *http.Response) delivery {
	where := "no Location"
	if loc, err := resp.Location(); err == nil {
		where = "Location host " + loc.Host
	}
	err := fmt.Errorf("envelope to %s: HTTP %d redirect (%s) not followed: the envelope URL comes from the DSN only",
		p.name, resp.StatusCode, p.redactor.Replace(where))
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusPermanentRedirect:
		return delivery{err: err, permanent: true, reason: reasonRedirected}
	default:
		return delivery{err: err}
	}
}

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

	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return delivery{}
	case code == http.StatusTooManyRequests:
		delay := p.limits.RetryAfter(category, now)
		if delay <= 0 {
			delay = defaultRateLimitDelay
		}
		return delivery{err: e.statusError(p, resp), rateLimited: true, delay: delay}
	case code >= 500:
		// Relay sends Retry-After with 503 when it sheds load.
		delay, _ := sentryhttp.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		return delivery{err: e.statusError(p, resp), delay: delay}
	default:
		// 4xx other than 429 means this envelope will never be accepted:
		// bad payload (400), bad or revoked key (401/403), too large (413).
		return delivery{err: e.statusError(p, resp), permanent: true}
	}
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

// Package forward makes the receiver a transparent proxy to one upstream
// Sentry, optionally through a durable spool. The receiver calls it with
// the raw request (the body as it came off the wire); nothing here reads
// an envelope.
package forward // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/relayjson"
)

// Forwarder makes the receiver a transparent proxy to one upstream Sentry:
// a request under /api/ goes to the same path and query on the upstream,
// with its body as it came (compressed or not) and the headers that carry
// its meaning and auth, and the SDK gets the upstream's status, body and
// rate-limit headers. The upstream comes from the configuration only:
// nothing in a request (path, Host, query, an envelope's dsn) can point it
// elsewhere.
type Forwarder struct {
	base      *url.URL
	client    *http.Client
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	// retryAfter is what an SDK is told to wait when the upstream cannot
	// be reached.
	retryAfter string
	// spool, when started, stores requests for later delivery, and limits
	// the upstream's rate limits, for the SDKs it answers.
	spool  *spool
	limits *rateLimits
}

// Settings are what a Forwarder needs: the upstream (a Sentry base URL,
// possibly under a path prefix), the client that reaches it, and the
// receiver's logger, telemetry and Retry-After value (whole seconds).
type Settings struct {
	Upstream   *url.URL
	Client     *http.Client
	Logger     *zap.Logger
	Telemetry  *metadata.TelemetryBuilder
	RetryAfter string
}

// New returns a Forwarder that sends each request as it is forwarded; call
// StartSpool to store them instead.
//
// The Forwarder never follows a redirect: it uses a copy of s.Client whose
// CheckRedirect hands the redirect back, so that an upstream (or anything
// on the path) answering 3xx with a Location elsewhere cannot make it send
// an SDK's body and keys to a host nobody configured. The 3xx goes back to
// the SDK as the upstream's answer.
func New(s Settings) *Forwarder {
	return &Forwarder{base: s.Upstream, client: withoutRedirects(s.Client), logger: s.Logger, telemetry: s.Telemetry, retryAfter: s.RetryAfter}
}

// withoutRedirects is a copy of c (nil: the default client) that returns
// a redirect instead of following it.
func withoutRedirects(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &noFollow
}

// StartSpool stores every request forwarded from now on in client (at most
// maxBytes of bodies) and delivers them in order in the background, until
// Shutdown.
func (f *Forwarder) StartSpool(ctx context.Context, client storage.Client, maxBytes int64) error {
	sp, err := openSpool(ctx, client, maxBytes, f.logger, f.telemetry, f.deliverSpooled)
	if err != nil {
		return err
	}
	f.spool, f.limits = sp, newRateLimits()
	sp.start()
	return nil
}

// Shutdown stops the spool's sender, if there is one, once its request in
// flight has its answer or ctx ends, and closes its storage client.
func (f *Forwarder) Shutdown(ctx context.Context) error {
	if f == nil || f.spool == nil {
		return nil
	}
	return f.spool.stop(ctx)
}

// Request headers passed upstream. Authorization only in Sentry's own
// scheme: another scheme is the collector's auth extension, whose
// credentials are not the upstream's business.
var forwardedRequestHeaders = []string{
	"Content-Type", "Content-Encoding", "User-Agent", "X-Sentry-Auth", "Origin", "Referer",
}

// Response headers passed back: what an SDK acts on.
var forwardedResponseHeaders = []string{
	"Content-Type", "Retry-After", "X-Sentry-Rate-Limits", "X-Sentry-Error",
}

// Answer is what the upstream said, or why it said nothing (Err).
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

// Target is the upstream URL of a request path, or false when the path is
// not a clean one under /api/ (a traversal, a doubled slash): such a
// request is not forwarded.
func (f *Forwarder) Target(u *url.URL) (*url.URL, bool) {
	p := u.EscapedPath()
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if clean != p || !strings.HasPrefix(clean, "/api/") || strings.Contains(p, "%2e") || strings.Contains(p, "%2E") {
		return nil, false
	}
	t := *f.base
	t.RawPath = f.prefix() + p
	t.Path, _ = url.PathUnescape(t.RawPath)
	t.RawQuery = u.RawQuery
	return &t, true
}

// prefix is the upstream's base path without its final slash ("" for a
// Sentry at the root of its host, "/sentry" for one under a prefix).
func (f *Forwarder) prefix() string {
	return strings.TrimSuffix(f.base.EscapedPath(), "/")
}

// apiPath is the request's own path of an upstream URL: the part from
// /api/ on, which names the endpoint.
func (f *Forwarder) apiPath(target *url.URL) string {
	return strings.TrimPrefix(target.EscapedPath(), f.prefix())
}

// Send posts body to the upstream as the SDK sent it; encoding overrides
// the request's Content-Encoding ("-" sends none, for a body re-serialized
// uncompressed).
//
// With a spool, the request is stored instead and the answer is 200 (or
// 503 when it cannot be stored); the spool delivers it later.
func (f *Forwarder) Send(ctx context.Context, r *http.Request, target *url.URL, body []byte, encoding string) Answer {
	header := upstreamHeader(r, encoding)
	if f.spool == nil {
		return f.post(ctx, r.Method, target, header, body)
	}
	// The spool keeps the request's own URI: a stored request goes to the
	// upstream as configured when it is delivered.
	uri := f.apiPath(target)
	if target.RawQuery != "" {
		uri += "?" + target.RawQuery
	}
	rec := &spoolRecord{Method: r.Method, URI: uri, Header: header, Body: body}
	if err := f.spool.enqueue(ctx, rec); err != nil {
		f.logger.Warn("Forward spool cannot take a request", zap.String("path_kind", pathKind(f.apiPath(target))), zap.Error(err))
		return Answer{Status: http.StatusServiceUnavailable,
			Header: http.Header{"Retry-After": {f.retryAfter}, "Content-Type": {"application/json"}},
			Body:   []byte(`{"detail":"the forward spool cannot store the request"}`)}
	}
	answer := Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte("{}")}
	if limits := f.limits.header(time.Now()); limits != "" {
		answer.Header.Set(sentryhttp.HeaderRateLimits, limits)
	}
	return answer
}

// deliverSpooled sends a stored request to the upstream as it is now
// configured.
func (f *Forwarder) deliverSpooled(ctx context.Context, rec *spoolRecord) Answer {
	p, query, _ := strings.Cut(rec.URI, "?")
	unescaped, err := url.PathUnescape(p)
	target, ok := f.Target(&url.URL{Path: unescaped, RawPath: p, RawQuery: query})
	if err != nil || !ok {
		// Only clean /api/ paths are stored; anything else is not ours.
		return Answer{Status: http.StatusBadRequest}
	}
	return f.post(ctx, rec.Method, target, rec.Header, rec.Body)
}

// upstreamHeader picks the request headers the upstream gets; encoding as
// for send.
func upstreamHeader(r *http.Request, encoding string) http.Header {
	header := make(http.Header)
	for _, h := range forwardedRequestHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			header[h] = v
		}
	}
	if a := r.Header.Get("Authorization"); isSentryScheme(a) {
		header.Set("Authorization", a)
	}
	setEncoding(header, encoding)
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		header.Set("X-Forwarded-For", forwardedFor(r.Header.Get("X-Forwarded-For"), host))
	}
	return header
}

// isSentryScheme reports an Authorization value in Sentry's own scheme.
func isSentryScheme(auth string) bool {
	return len(auth) > 7 && strings.EqualFold(auth[:7], "sentry ")
}

// setEncoding applies send's encoding override: "" keeps the request's,
// "-" sends none.
func setEncoding(header http.Header, encoding string) {
	switch encoding {
	case "":
	case "-":
		header.Del("Content-Encoding")
	default:
		header.Set("Content-Encoding", encoding)
	}
}

// forwardedFor appends the client to the X-Forwarded-For it came with.
func forwardedFor(prior, client string) string {
	if prior == "" {
		return client
	}
	return prior + ", " + client
}

// post sends one request upstream and reads its answer.
func (f *Forwarder) post(ctx context.Context, method string, target *url.URL, header http.Header, body []byte) Answer {
	kind := pathKind(f.apiPath(target))
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, method, target.String(), bytes.NewReader(body))
	if err != nil {
		return Answer{Err: err}
	}
	req.Header = header.Clone()
	if _, ok := req.Header["User-Agent"]; !ok {
		// An empty value keeps net/http from adding its own: a request
		// that came without a User-Agent goes on without one.
		req.Header["User-Agent"] = []string{""}
	}
	resp, err := f.client.Do(req)
	var answer Answer
	if err == nil {
		// A Sentry answer is a short JSON document; a larger one is cut.
		answer.Body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		answer.Status, answer.Header = resp.StatusCode, resp.Header
		if f.limits != nil {
			f.limits.update(resp.Header, time.Now())
		}
	}
	answer.Err = err
	f.record(ctx, kind, len(body), answer, time.Since(start))
	return answer
}

func (f *Forwarder) record(ctx context.Context, kind string, size int, a Answer, took time.Duration) {
	status := "error"
	if a.Err == nil {
		status = strconv.Itoa(a.Status/100) + "xx"
	}
	pathAttr := attribute.String("forward_path", kind)
	f.telemetry.ReceiverSentryprofileForwardedRequests.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(pathAttr, attribute.String("forward_status", status))))
	f.telemetry.ReceiverSentryprofileForwardedBytes.Add(ctx, int64(size), metric.WithAttributeSet(attribute.NewSet(pathAttr)))
	f.telemetry.ReceiverSentryprofileForwardDuration.Record(ctx, took.Seconds())
	if a.Err != nil {
		// The error names the upstream URL, never the request's keys or body.
		f.logger.Warn("Forwarding to the upstream Sentry failed",
			zap.String("path_kind", kind), zap.Error(redactURLError(a.Err)))
	}
}

// redactURLError drops the query (which may carry sentry_key) from an
// error that names a URL.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery = ""
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}

// Write writes the upstream's answer to the SDK: its status, body and the
// headers an SDK acts on. An unreachable upstream is 502 (504 when it did
// not answer in time) with Retry-After, as a proxying Relay answers.
func (f *Forwarder) Write(w http.ResponseWriter, a Answer) {
	if a.Err != nil {
		status, detail := http.StatusBadGateway, "the upstream Sentry cannot be reached"
		var ne net.Error
		if errors.As(a.Err, &ne) && ne.Timeout() {
			status, detail = http.StatusGatewayTimeout, "the upstream Sentry did not answer in time"
		}
		w.Header().Set("Retry-After", f.retryAfter)
		relayjson.WriteError(w, status, detail)
		return
	}
	for _, h := range forwardedResponseHeaders {
		if v := a.Header.Values(h); len(v) > 0 {
			w.Header()[h] = v
		}
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// pathKind names the Sentry endpoint of an /api/ path for the telemetry: a
// client chooses paths, so anything else is "other".
func pathKind(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 3 {
		return "other"
	}
	switch parts[2] {
	case "envelope", "store", "minidump", "security", "unreal", "attachment":
		return parts[2]
	case "csp-report":
		return "security"
	case "integration":
		return "otlp"
	}
	return "other"
}

// SendAsync is Send in the background, for a request answered once it is
// translated as well: the upstream call outlives the SDK's request, which
// may end as soon as it has its answer.
func (f *Forwarder) SendAsync(r *http.Request, target *url.URL, body []byte, encoding string) <-chan Answer {
	done := make(chan Answer, 1)
	ctx := context.WithoutCancel(r.Context())
	req := r.WithContext(ctx)
	go func() { done <- f.Send(ctx, req, target, body, encoding) }()
	return done
}

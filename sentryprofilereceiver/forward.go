package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

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
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// forwarder makes the receiver a transparent proxy to one upstream Sentry:
// a request under /api/ goes to the same path and query on the upstream,
// with its body as it came (compressed or not) and the headers that carry
// its meaning and auth, and the SDK gets the upstream's status, body and
// rate-limit headers. The upstream comes from the configuration only:
// nothing in a request (path, Host, query, an envelope's dsn) can point it
// elsewhere.
type forwarder struct {
	base      *url.URL
	client    *http.Client
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	// retryAfter is what an SDK is told to wait when the upstream cannot
	// be reached.
	retryAfter string
	// spool, when configured, stores requests for later delivery, and
	// limits the upstream's rate limits, for the SDKs it answers.
	spool  *spool
	limits *rateLimits
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

// rawRequest is a request body as it came off the wire, held once for
// forwarding and (decompressed from it) for translation.
type rawRequest struct {
	body   []byte
	target *url.URL
	// header is the request's, before confighttp's decompression dropped
	// its Content-Encoding.
	header http.Header
	// release gives back the envelope slot withForwarding took, once the
	// envelope is translated: waiting for the upstream costs the body's
	// memory, not a slot.
	release func()
}

type rawRequestKey struct{}

func rawRequestOf(ctx context.Context) *rawRequest {
	raw, _ := ctx.Value(rawRequestKey{}).(*rawRequest)
	return raw
}

// upstreamAnswer is what the upstream said, or why it said nothing.
type upstreamAnswer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// target is the upstream URL of a request path, or false when the path is
// not a clean one under /api/ (a traversal, a doubled slash): such a
// request is not forwarded.
func (f *forwarder) target(u *url.URL) (*url.URL, bool) {
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
func (f *forwarder) prefix() string {
	return strings.TrimSuffix(f.base.EscapedPath(), "/")
}

// apiPath is the request's own path of an upstream URL: the part from
// /api/ on, which names the endpoint.
func (f *forwarder) apiPath(target *url.URL) string {
	return strings.TrimPrefix(target.EscapedPath(), f.prefix())
}

// send posts body to the upstream as the SDK sent it; encoding overrides
// the request's Content-Encoding ("-" sends none, for a body re-serialized
// uncompressed).
//
// With a spool, the request is stored instead and the answer is 200 (or
// 503 when it cannot be stored); the spool delivers it later.
func (f *forwarder) send(ctx context.Context, r *http.Request, target *url.URL, body []byte, encoding string) upstreamAnswer {
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
		return upstreamAnswer{status: http.StatusServiceUnavailable,
			header: http.Header{"Retry-After": {f.retryAfter}, "Content-Type": {"application/json"}},
			body:   []byte(`{"detail":"the forward spool cannot store the request"}`)}
	}
	answer := upstreamAnswer{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: []byte("{}")}
	if limits := f.limits.header(time.Now()); limits != "" {
		answer.header.Set(sentryRateLimitsHeader, limits)
	}
	return answer
}

// deliverSpooled sends a stored request to the upstream as it is now
// configured.
func (f *forwarder) deliverSpooled(ctx context.Context, rec *spoolRecord) upstreamAnswer {
	p, query, _ := strings.Cut(rec.URI, "?")
	unescaped, err := url.PathUnescape(p)
	target, ok := f.target(&url.URL{Path: unescaped, RawPath: p, RawQuery: query})
	if err != nil || !ok {
		// Only clean /api/ paths are stored; anything else is not ours.
		return upstreamAnswer{status: http.StatusBadRequest}
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
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "sentry ") {
		header.Set("Authorization", a)
	}
	switch encoding {
	case "":
	case "-":
		header.Del("Content-Encoding")
	default:
		header.Set("Content-Encoding", encoding)
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if prior := r.Header.Get("X-Forwarded-For"); prior != "" {
			host = prior + ", " + host
		}
		header.Set("X-Forwarded-For", host)
	}
	return header
}

// post sends one request upstream and reads its answer.
func (f *forwarder) post(ctx context.Context, method string, target *url.URL, header http.Header, body []byte) upstreamAnswer {
	kind := pathKind(f.apiPath(target))
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, method, target.String(), bytes.NewReader(body))
	if err != nil {
		return upstreamAnswer{err: err}
	}
	req.Header = header.Clone()
	if _, ok := req.Header["User-Agent"]; !ok {
		// An empty value keeps net/http from adding its own: a request
		// that came without a User-Agent goes on without one.
		req.Header["User-Agent"] = []string{""}
	}
	resp, err := f.client.Do(req)
	var answer upstreamAnswer
	if err == nil {
		// A Sentry answer is a short JSON document; a larger one is cut.
		answer.body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		answer.status, answer.header = resp.StatusCode, resp.Header
		if f.limits != nil {
			f.limits.update(resp.Header, time.Now())
		}
	}
	answer.err = err
	f.record(ctx, kind, len(body), answer, time.Since(start))
	return answer
}

func (f *forwarder) record(ctx context.Context, kind string, size int, a upstreamAnswer, took time.Duration) {
	status := "error"
	if a.err == nil {
		status = strconv.Itoa(a.status/100) + "xx"
	}
	pathAttr := attribute.String("forward_path", kind)
	f.telemetry.ReceiverSentryprofileForwardedRequests.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(pathAttr, attribute.String("forward_status", status))))
	f.telemetry.ReceiverSentryprofileForwardedBytes.Add(ctx, int64(size), metric.WithAttributeSet(attribute.NewSet(pathAttr)))
	f.telemetry.ReceiverSentryprofileForwardDuration.Record(ctx, took.Seconds())
	if a.err != nil {
		// The error names the upstream URL, never the request's keys or body.
		f.logger.Warn("Forwarding to the upstream Sentry failed",
			zap.String("path_kind", kind), zap.Error(redactURLError(a.err)))
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

// answer writes the upstream's answer to the SDK: its status, body and the
// headers an SDK acts on. An unreachable upstream is 502 (504 when it did
// not answer in time) with Retry-After, as a proxying Relay answers.
func (f *forwarder) answer(w http.ResponseWriter, a upstreamAnswer) {
	if a.err != nil {
		status, detail := http.StatusBadGateway, "the upstream Sentry cannot be reached"
		var ne net.Error
		if errors.As(a.err, &ne) && ne.Timeout() {
			status, detail = http.StatusGatewayTimeout, "the upstream Sentry did not answer in time"
		}
		w.Header().Set("Retry-After", f.retryAfter)
		writeError(w, &requestError{status: status, detail: detail})
		return
	}
	for _, h := range forwardedResponseHeaders {
		if v := a.header.Values(h); len(v) > 0 {
			w.Header()[h] = v
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
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

// isEnvelopePath reports whether a clean /api/ path is the envelope
// endpoint, which the receiver reads besides forwarding.
func isEnvelopePath(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	return len(parts) == 3 && parts[0] == "api" && parts[2] == "envelope"
}

// withForwarding wraps the server's whole handler chain (before confighttp
// decompresses anything): a request under /api/ is read off the wire once,
// its raw body kept for the upstream. Envelopes then go through the chain
// as usual, serveEnvelope forwarding them; every other /api/ request is
// authorized and forwarded here. CORS preflights go to the chain.
func (h *envelopeHandler) withForwarding(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.forward == nil || r.Method == http.MethodOptions || !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		target, ok := h.forward.target(r.URL)
		if !ok {
			writeError(w, &requestError{status: http.StatusNotFound, detail: "not found"})
			return
		}
		// The slot bounds the bodies being read and translated, as for
		// envelopes that are not forwarded.
		select {
		case h.slots <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		release := sync.OnceFunc(func() { <-h.slots })
		defer release()
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.ServerConfig.MaxRequestBodySize))
		if err != nil {
			writeError(w, h.bodyError(err))
			return
		}
		// target checked that the request's path is a clean one.
		if isEnvelopePath(r.URL.Path) && r.Method == http.MethodPost {
			raw := &rawRequest{body: body, target: target, header: r.Header.Clone(), release: release}
			r = r.WithContext(context.WithValue(r.Context(), rawRequestKey{}, raw))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			next.ServeHTTP(w, r)
			return
		}
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		projectID, _ := canonicalProjectID(parts[1])
		if rerr := h.auth.authenticate(r, "", projectID); rerr != nil {
			h.refuse(w, projectID, rerr)
			return
		}
		release()
		h.forward.answer(w, h.forward.send(r.Context(), r, target, body, ""))
	})
}

// forwardEnvelope sends an envelope upstream while it is translated. With
// forward_profiles off, its profile items are stripped (t.decoded holds the
// decompressed envelope) and the rest goes uncompressed.
func (h *envelopeHandler) forwardEnvelope(r *http.Request, raw *rawRequest, decoded []byte) <-chan upstreamAnswer {
	body, encoding := raw.body, ""
	if !h.cfg.ForwardProfiles && decoded != nil {
		stripped, removed, err := envelope.Strip(decoded, translator.IsProfileItem)
		if err == nil && removed > 0 {
			body, encoding = stripped, "-"
		}
	}
	done := make(chan upstreamAnswer, 1)
	// The SDK's request may end when it has its answer; the upstream call
	// must not end with it before that.
	ctx := context.WithoutCancel(r.Context())
	orig := r.Clone(ctx)
	orig.Header = raw.header
	go func() { done <- h.forward.send(ctx, orig, raw.target, body, encoding) }()
	return done
}

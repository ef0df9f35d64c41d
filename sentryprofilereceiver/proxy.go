package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Forwarding: with `forward:` configured, confighttp passes the bodies it
// would decode through undecoded (passThroughDecoders), so the handler has
// the body as it came off the wire. It hands that to the forwarder and
// decodes a copy for the router itself. Every request still goes through
// confighttp's chain (auth extensions, CORS, body limit, telemetry).

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/relayjson"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
)

// readForwarded takes an envelope slot and reads a forwarded request's body
// as it came, at the body's pace. The caller has authenticated the request
// as far as its headers and query allow. The slot bounds the bodies being read and translated; the
// caller gives it back with release (once is enough, more is harmless) as
// soon as translation is done, since waiting for the upstream costs the
// body's memory, not a slot. ok is false when the request is answered
// already (its client gone, or its body too large).
func (h *envelopeHandler) readForwarded(w http.ResponseWriter, r *http.Request) (target *url.URL, raw []byte, release func(), ok bool) {
	target, _ = h.forward.Target(r.URL) // cleanAPIPaths let only clean paths in
	if !h.slots.acquire(r.Context()) {
		return nil, nil, nil, false
	}
	release = sync.OnceFunc(h.slots.release)
	pacedBodyOf(r).start()
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.ServerConfig.MaxRequestBodySize))
	if err != nil {
		release()
		writeError(w, h.bodyError(err))
		return nil, nil, nil, false
	}
	return target, raw, release, true
}

// proxyEnvelope serves an envelope when forwarding: the upstream gets it as
// it came (without its profiles when forward_profiles is off) while the
// router translates it, and the SDK gets the upstream's answer. A pipeline
// refusal is counted (obsreport) and logged, not told.
func (h *envelopeHandler) proxyEnvelope(w http.ResponseWriter, r *http.Request, projectID string) {
	if rerr := h.authenticateOutsideBody(r, projectID); rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	target, raw, release, ok := h.readForwarded(w, r)
	if !ok {
		return
	}
	defer release()
	body, err := h.bodies.openEnvelope(w, raw, r.Header.Get("Content-Encoding"), h.cfg.ServerConfig.MaxRequestBodySize)
	if err != nil {
		h.decodeError(w, r, err.Error(), http.StatusBadRequest)
		return
	}
	defer body.Close()
	in, decoded := h.forwardedEnvelopeReader(w, body)
	req := forwardedEnvelope{r: r, projectID: projectID, target: target, raw: raw, release: release}
	t := h.pool.get()
	_, rerr := h.readEnvelope(t, r, in, projectID) // the SDK gets the upstream's answer, with its id
	if rerr != nil {
		h.pool.put(t)
		h.forwardUnread(w, req, rerr)
		return
	}
	h.forwardTranslated(w, req, t, decoded)
}

// forwardedEnvelope is an envelope request on its way to the upstream.
type forwardedEnvelope struct {
	r         *http.Request
	projectID string
	target    *url.URL
	raw       []byte // the body as it came
	release   func() // gives the slot back
}

// authenticateOutsideBody checks a key outside the body before the request
// takes a slot. A key only in the envelope's dsn is checked once the body
// is read: the raw body is compressed, and its header is not read before
// decompressing it (README, Limits).
func (h *envelopeHandler) authenticateOutsideBody(r *http.Request, projectID string) *requestError {
	if needsEnvelopeDSN(r) {
		return nil
	}
	return h.auth.authenticate(r, "", projectID)
}

// forwardedEnvelopeReader is the decoded envelope within the body limit.
// With forward_profiles off, the decoded envelope is also kept (decoded)
// to re-serialize it without its profiles.
func (h *envelopeHandler) forwardedEnvelopeReader(w http.ResponseWriter, body io.ReadCloser) (io.Reader, *bytes.Buffer) {
	if gz, ok := body.(*gzipBody); ok && h.cfg.ForwardProfiles {
		return gz, nil // within the body limit itself, and read whole when it can be
	}
	in := io.Reader(http.MaxBytesReader(w, body, h.cfg.ServerConfig.MaxRequestBodySize))
	if h.cfg.ForwardProfiles {
		return in, nil
	}
	decoded := new(bytes.Buffer)
	return io.TeeReader(in, decoded), decoded
}

// forwardUnread sends an envelope the receiver cannot read to the
// upstream, which may: only an unauthorized one stops here.
func (h *envelopeHandler) forwardUnread(w http.ResponseWriter, req forwardedEnvelope, rerr *requestError) {
	if h.refusesUnread(req, rerr) {
		h.refuse(w, req.projectID, rerr)
		return
	}
	upstream := h.forward.SendAsync(req.r, req.target, req.raw, "")
	req.release()
	h.forward.Write(w, <-upstream)
}

// refusesUnread reports a refusal that is about who sent the envelope, not
// what it holds.
func (h *envelopeHandler) refusesUnread(req forwardedEnvelope, rerr *requestError) bool {
	return rerr.status == http.StatusUnauthorized || rerr.status == http.StatusForbidden ||
		h.auth.authenticate(req.r, "", req.projectID) != nil
}

// forwardTranslated sends a read envelope upstream while the router
// translates it.
func (h *envelopeHandler) forwardTranslated(w http.ResponseWriter, req forwardedEnvelope, t *envelopeState, decoded *bytes.Buffer) {
	upstreamBody, encoding := h.upstreamEnvelope(req.raw, decoded)
	upstream := h.forward.SendAsync(req.r, req.target, upstreamBody, encoding)
	if err := h.router.route(req.r.Context(), t, req.projectID); err != nil {
		h.logger.Debug("Forwarded envelope refused by the pipeline",
			zap.String("project_id", req.projectID), zap.Error(err))
	}
	h.pool.put(t)
	req.release()
	h.forward.Write(w, <-upstream)
}

// upstreamEnvelope is the envelope the upstream gets and its encoding
// override: the raw body, or with forward_profiles off the decoded
// envelope without its profile items, uncompressed ("-").
func (h *envelopeHandler) upstreamEnvelope(raw []byte, decoded *bytes.Buffer) ([]byte, string) {
	if decoded == nil {
		return raw, ""
	}
	stripped, removed, err := envelope.Strip(decoded.Bytes(), itemrules.IsProfileItem)
	if err != nil || removed == 0 {
		return raw, ""
	}
	return stripped, "-"
}

// proxyRequest forwards a request under /api/ other than an envelope (an
// event to /store/, a minidump, a security report...) once its credentials
// are checked.
func (h *envelopeHandler) proxyRequest(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		notFound(w, r) // a CORS preflight is confighttp's (when cors is configured)
		return
	}
	target, _ := h.forward.Target(r.URL) // cleanAPIPaths let only clean paths in
	projectID := projectOfAPIPath(r.URL.Path)
	// These requests carry their key outside the body: an unauthenticated
	// one takes no slot.
	if rerr := h.auth.authenticate(r, "", projectID); rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	if !h.slots.acquire(r.Context()) {
		return
	}
	release := sync.OnceFunc(h.slots.release)
	defer release()
	pacedBodyOf(r).start()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.ServerConfig.MaxRequestBodySize))
	if err != nil {
		writeError(w, h.bodyError(err))
		return
	}
	release()
	h.forward.Write(w, h.forward.Send(r.Context(), r, target, body, ""))
}

// projectOfAPIPath is the project id of /api/<project>/…, or "".
func projectOfAPIPath(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	projectID, _ := sentryhttp.CanonicalProjectID(parts[1])
	return projectID
}

// cleanAPIPaths answers 404 for a path under /api/ that is not a clean one
// (a traversal, a doubled slash, encoded dots), in front of the server's
// chain: ServeMux would redirect it to its cleaned form, and the path a
// request is forwarded to must be the one it came with. CORS preflights go
// to the chain.
func cleanAPIPaths(fwd *forward.Forwarder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions && strings.HasPrefix(r.URL.Path, "/api/") {
			if _, ok := fwd.Target(r.URL); !ok {
				relayjson.WriteError(w, http.StatusNotFound, "not found")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

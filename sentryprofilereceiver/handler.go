package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"errors"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// obsreportFormat names the wire format in the receiver's obsreport spans.
const obsreportFormat = "sentry_envelope"

// envelopeHandler serves POST /api/{project_id}/envelope/: it reads the
// envelope, hands it to the router and answers. With forwarding, proxy.go
// serves the same endpoint and every other /api/ request.
type envelopeHandler struct {
	cfg    *Config
	logger *zap.Logger
	auth   *authenticator
	router *router
	slots  envelopeSlots
	pool   *envelopeStatePool

	// forward sends /api/ requests to the upstream Sentry; nil when
	// forward is not configured.
	forward *forward.Forwarder
	// bodies decodes the request bodies confighttp passes through
	// undecoded when forwarding.
	bodies rawBodyDecoders
	// encodings are the Content-Encodings the server decodes, known once
	// confighttp has applied its defaults.
	encodings map[string]bool

	// pace is what a request's body must keep to while the receiver
	// waits for it (pace.go).
	pace pacing

	// retryAfter and rateLimits are the 429 headers, rendered once.
	retryAfter string
	rateLimits string
}

// routes answers 404 outside the envelope endpoint and 405 for other methods
// on it, both with Relay's JSON body. With forwarding, every other request
// under /api/ goes to the upstream.
func (h *envelopeHandler) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, path := range [...]string{"/api/{project_id}/envelope/{$}", "/api/{project_id}/envelope"} {
		mux.HandleFunc(http.MethodPost+" "+path, h.serveEnvelope)
		mux.HandleFunc(path, h.otherMethod)
	}
	h.storeRoutes(mux)
	if h.forward != nil {
		mux.HandleFunc("/api/", h.proxyRequest)
	}
	mux.HandleFunc("/", notFound)
	return mux
}

func (h *envelopeHandler) serveEnvelope(w http.ResponseWriter, r *http.Request) {
	projectID, ok := sentryhttp.CanonicalProjectID(r.PathValue("project_id"))
	if !ok {
		// Relay's route only matches numeric ids.
		writeError(w, &requestError{status: http.StatusNotFound, detail: "not found; the project id is numeric"})
		return
	}
	if h.forward != nil {
		h.proxyEnvelope(w, r, projectID)
		return
	}
	// Authenticated first: a request that is not takes no slot and no
	// pooled buffer.
	body, rerr := h.admitEnvelope(r, projectID)
	if rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	if !h.slots.acquire(r.Context()) {
		return // the client is gone; nobody reads an answer
	}
	defer h.slots.release()
	pacedBodyOf(r).start()
	t := h.pool.get()
	defer h.pool.put(t)
	eventID, rerr := h.readEnvelope(t, r, body, projectID)
	if rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	if err := h.router.route(r.Context(), t, projectID); err != nil {
		h.refuse(w, projectID, consumerError(err))
		return
	}
	writeAccepted(w, eventID)
}

func (h *envelopeHandler) otherMethod(w http.ResponseWriter, r *http.Request) {
	if h.forward != nil && r.Method != http.MethodOptions {
		h.proxyRequest(w, r)
		return
	}
	w.Header().Set("Allow", http.MethodPost)
	writeError(w, &requestError{status: http.StatusMethodNotAllowed, detail: "method not allowed; envelopes are POSTed"})
}

func notFound(w http.ResponseWriter, _ *http.Request) {
	writeError(w, &requestError{status: http.StatusNotFound, detail: "not found; envelopes go to /api/{project_id}/envelope/"})
}

// readEnvelope reads the envelope header from body, authorizes the request
// (the header may carry the dsn), then reads every item, refusing the
// envelope (413) at the first item over its type's limit. Items stay raw:
// the router decodes them.
func (h *envelopeHandler) readEnvelope(t *envelopeState, r *http.Request, body io.Reader, projectID string) (string, *requestError) {
	eventID, rerr := h.readHeader(t, r, body, projectID)
	if rerr != nil {
		return "", rerr
	}
	return eventID, h.readItems(t, projectID)
}

// readHeader reads and authorizes the envelope header, and returns its
// event id.
func (h *envelopeHandler) readHeader(t *envelopeState, r *http.Request, body io.Reader, projectID string) (string, *requestError) {
	t.resetReader(body, h.readerLimits())
	header, err := t.reader.Header()
	if err != nil {
		return "", h.bodyError(err)
	}
	if rerr := h.auth.authenticate(r, header.DSN, projectID); rerr != nil {
		return "", rerr
	}
	if header.SDK != nil {
		t.sdkName = header.SDK.Name
	}
	t.sentAt, t.arrived = header.SentAt, time.Now()
	eventID, ok := canonicalEventID(header.EventID)
	if !ok {
		return "", &requestError{status: http.StatusBadRequest, detail: "invalid event_id in envelope header"}
	}
	return eventID, nil
}

// readItems reads every item, refusing the envelope at the first over its
// type's limit.
func (h *envelopeHandler) readItems(t *envelopeState, projectID string) *requestError {
	for {
		item, err := t.reader.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return h.bodyError(err)
		}
		t.items = append(t.items, item)
		if rerr := h.checkItemSize(t, len(t.items)-1, projectID); rerr != nil {
			return rerr
		}
	}
}

// resetReader reads body with the pooled reader, or a new one: from its
// buffer when it is a gzip body inflated whole.
func (t *envelopeState) resetReader(body io.Reader, limits envelope.Limits) {
	if data, ok := inflatedWhole(body); ok {
		if t.reader == nil {
			t.reader = envelope.NewReader(nil, limits)
		}
		t.reader.ResetBytes(data, limits)
		return
	}
	if t.reader == nil {
		t.reader = envelope.NewReader(body, limits)
		return
	}
	t.reader.Reset(body, limits)
}

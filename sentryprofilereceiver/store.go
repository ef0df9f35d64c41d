package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The store endpoint: POST /api/{project_id}/store/ takes one event as the
// whole body, as older SDKs send errors (sentry-python 1.x, raven). The
// event goes to the logs signal as an envelope's event item would, and the
// answer is Relay's: 200 {"id":"<event_id>"}. With forwarding, the
// upstream gets the body as it came and the SDK the upstream's answer.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
)

// storePaths are the store endpoint's paths, with and without the
// trailing slash, as Relay routes them.
var storePaths = [...]string{"/api/{project_id}/store/{$}", "/api/{project_id}/store"}

// storeRoutes adds the store endpoint to the mux.
func (h *envelopeHandler) storeRoutes(mux *http.ServeMux) {
	for _, path := range storePaths {
		mux.HandleFunc(http.MethodPost+" "+path, h.serveStore)
	}
}

func (h *envelopeHandler) serveStore(w http.ResponseWriter, r *http.Request) {
	projectID, ok := sentryhttp.CanonicalProjectID(r.PathValue("project_id"))
	if !ok {
		writeError(w, &requestError{status: http.StatusNotFound, detail: "not found; the project id is numeric"})
		return
	}
	if h.forward != nil {
		h.proxyStore(w, r, projectID)
		return
	}
	// The key is in the headers or the query: an unauthenticated request
	// takes no slot.
	if rerr := h.auth.authenticate(r, "", projectID); rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	if !h.slots.acquire(r.Context()) {
		return
	}
	defer h.slots.release()
	pacedBodyOf(r).start()
	eventID, rerr := h.acceptStored(r, projectID)
	if rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	writeAccepted(w, eventID)
}

// acceptStored reads a store body and routes its event; the event id to
// answer.
func (h *envelopeHandler) acceptStored(r *http.Request, projectID string) (string, *requestError) {
	body, rerr := h.readStoreBody(r.Body, projectID)
	if rerr != nil {
		return "", rerr
	}
	eventID, rerr := storeEventID(body)
	if rerr != nil {
		return "", rerr
	}
	if err := h.routeStored(r, body, projectID); err != nil {
		return "", consumerError(err)
	}
	return eventID, nil
}

// readStoreBody reads a store body (confighttp decoded it and bounds it by
// max_request_body_size): one event, refused with 413 over the event
// limit, as Relay refuses it over max_event_size, before it is answered.
// Only the limit and one byte more are ever held.
func (h *envelopeHandler) readStoreBody(r io.Reader, projectID string) ([]byte, *requestError) {
	body, err := io.ReadAll(io.LimitReader(r, maxEventItemBytes+1))
	if err != nil {
		return nil, h.bodyError(err)
	}
	if len(body) > maxEventItemBytes {
		h.router.drops.dropped(droppedItem{itemType: sentryevent.ItemType, reason: reasonTooLarge, projectID: projectID})
		return nil, &requestError{status: http.StatusRequestEntityTooLarge,
			detail: fmt.Sprintf("event exceeds %d bytes", maxEventItemBytes)}
	}
	return body, nil
}

// proxyStore forwards a store request as it came and translates its
// decoded body; the SDK gets the upstream's answer. A body the receiver
// cannot read still goes to the upstream, which may.
func (h *envelopeHandler) proxyStore(w http.ResponseWriter, r *http.Request, projectID string) {
	if rerr := h.auth.authenticate(r, "", projectID); rerr != nil {
		h.refuse(w, projectID, rerr)
		return
	}
	target, raw, release, ok := h.readForwarded(w, r)
	if !ok {
		return
	}
	defer release()
	upstream := h.forward.SendAsync(r, target, raw, "")
	h.translateForwardedStore(r, raw, projectID)
	release()
	h.forward.Write(w, <-upstream)
}

// translateForwardedStore routes a forwarded store body's event when the
// receiver can read it; a refusal is logged, not told.
func (h *envelopeHandler) translateForwardedStore(r *http.Request, raw []byte, projectID string) {
	body, err := h.decodedBody(raw, r.Header.Get("Content-Encoding"))
	if err != nil {
		return
	}
	if _, rerr := storeEventID(body); rerr != nil {
		return
	}
	if err := h.routeStored(r, body, projectID); err != nil {
		h.logger.Debug("Forwarded store event refused by the pipeline",
			zap.String("project_id", projectID), zap.Error(err))
	}
}

// decodedBody is a forwarded request's body, decompressed and bounded.
func (h *envelopeHandler) decodedBody(raw []byte, encoding string) ([]byte, error) {
	body, err := h.bodies.open(raw, encoding)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(io.LimitReader(body, h.cfg.ServerConfig.MaxRequestBodySize))
}

// routeStored sends a store body through the router as an envelope of one
// event item: the same translation, counting and resource.
func (h *envelopeHandler) routeStored(r *http.Request, body []byte, projectID string) error {
	t := h.pool.get()
	defer h.pool.put(t)
	t.items = append(t.items, envelope.Item{
		Header:  envelope.ItemHeader{Type: sentryevent.ItemType, Length: int64(len(body))},
		Payload: body, Size: int64(len(body)),
	})
	t.arrived = time.Now()
	return h.router.route(r.Context(), t, projectID)
}

// storeEventID is the event's "event_id" as Sentry answers it, or a new
// one when the event has none (Relay assigns one). A body that is not a
// JSON object is refused, as Relay refuses it.
func storeEventID(body []byte) (string, *requestError) {
	var doc struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", &requestError{status: http.StatusBadRequest, detail: "invalid event: " + err.Error()}
	}
	if doc.EventID == "" {
		var id [16]byte
		_, _ = rand.Read(id[:])
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		return hex.EncodeToString(id[:]), nil
	}
	id, ok := canonicalEventID(doc.EventID)
	if !ok {
		return "", &requestError{status: http.StatusBadRequest, detail: "invalid event_id"}
	}
	return id, nil
}

package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// obsreportFormat names the wire format in the receiver's obsreport spans.
const obsreportFormat = "sentry_envelope"

// envelopeHandler serves POST /api/{project_id}/envelope/: one envelope in,
// at most one pprofile.Profiles and one ptrace.Traces out.
type envelopeHandler struct {
	cfg    *Config
	logger *zap.Logger
	auth   *authenticator
	// next and nextTraces are the pipelines of the signals configured;
	// either may be nil.
	next       xconsumer.Profiles
	nextTraces consumer.Traces
	obsrep     *receiverhelper.ObsReport
	telemetry  *metadata.TelemetryBuilder
	drops      *dropLog
	// links feeds the span index and holds chunks for it; nil when
	// links::enabled is off.
	links *chunkLinks
	// forward sends every /api/ request to the upstream Sentry; nil when
	// forward is not configured.
	forward *forwarder
	// mode is which of Relay's rules drop an item (config `validation`).
	mode sentry.Mode

	// retryAfter and rateLimits are the 429 headers, rendered once.
	retryAfter string
	rateLimits string

	// slots holds one token per envelope being read or translated.
	slots chan struct{}
	// warm and translations hold *translation: the reader, decoder and
	// builder of an envelope, kept for the next one. warm keeps one per
	// core across garbage collections, which under load run every few
	// milliseconds and would otherwise empty the sync.Pool and make the
	// next envelopes grow their buffers again; the rest come and go with
	// the load.
	warm         chan *translation
	translations sync.Pool
}

func newEnvelopeHandler(cfg *Config, logger *zap.Logger, next xconsumer.Profiles, obsrep *receiverhelper.ObsReport, tb *metadata.TelemetryBuilder) *envelopeHandler {
	seconds := strconv.FormatInt(int64((cfg.RetryAfter+time.Second-1)/time.Second), 10) // whole seconds, rounded up
	mode := sentry.ModeLenient
	if cfg.Validation == ValidationRelay {
		mode = sentry.ModeRelay
	}
	return &envelopeHandler{
		cfg:        cfg,
		logger:     logger,
		drops:      newDropLog(logger),
		links:      newChunkLinks(cfg.Links),
		mode:       mode,
		auth:       newAuthenticator(cfg),
		next:       next,
		obsrep:     obsrep,
		telemetry:  tb,
		retryAfter: seconds,
		slots:      make(chan struct{}, cfg.MaxConcurrentEnvelopes),
		warm:       make(chan *translation, min(runtime.GOMAXPROCS(0), cfg.MaxConcurrentEnvelopes)),
		// No category list means every category: while the pipeline pushes
		// back, any envelope still costs a read, so the SDK is asked to hold
		// them all. Scope "organization" is what Relay uses for quotas that
		// are not tied to one key or project.
		rateLimits: seconds + "::organization",
	}
}

// routes answers 404 outside the envelope endpoint and 405 for other methods
// on it, both with Relay's JSON body.
func (h *envelopeHandler) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, path := range [...]string{"/api/{project_id}/envelope/{$}", "/api/{project_id}/envelope"} {
		mux.HandleFunc(http.MethodPost+" "+path, h.serveEnvelope)
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, &requestError{status: http.StatusMethodNotAllowed, detail: "method not allowed; envelopes are POSTed"})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, &requestError{status: http.StatusNotFound, detail: "not found; envelopes go to /api/{project_id}/envelope/"})
	})
	return mux
}

func (h *envelopeHandler) serveEnvelope(w http.ResponseWriter, r *http.Request) {
	projectID, ok := canonicalProjectID(r.PathValue("project_id"))
	if !ok {
		// Relay's route only matches numeric ids.
		writeError(w, &requestError{status: http.StatusNotFound, detail: "not found; the project id is numeric"})
		return
	}
	raw := rawRequestOf(r.Context())
	if raw == nil {
		// Wait for a slot before reading the body: a waiting request costs
		// a connection, not its envelope's memory. (A forwarded request
		// holds the slot withForwarding took.)
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots }()
		case <-r.Context().Done():
			return // the client is gone; nobody reads an answer
		}
	}
	t := h.getTranslation()
	pooled := true
	defer func() {
		if pooled {
			h.putTranslation(t)
		}
	}()
	// With forward_profiles off, the decompressed envelope is kept to
	// re-serialize it without its profiles.
	var decoded *bytes.Buffer
	if raw != nil && !h.cfg.ForwardProfiles {
		decoded = new(bytes.Buffer)
		r.Body = readCloser{Reader: io.TeeReader(r.Body, decoded), Closer: r.Body}
	}
	eventID, rerr := h.readEnvelope(t, r, projectID)
	if rerr != nil {
		// A forwarded envelope the receiver cannot read still goes to the
		// upstream, which may: only an unauthorized one stops here.
		if raw != nil && rerr.status != http.StatusUnauthorized && rerr.status != http.StatusForbidden &&
			h.auth.authenticate(r, "", projectID) == nil {
			upstream := h.forwardEnvelope(r, raw, nil)
			raw.release()
			h.forward.answer(w, <-upstream)
			return
		}
		h.refuse(w, projectID, rerr)
		return
	}
	var upstream <-chan upstreamAnswer
	if raw != nil {
		var env []byte
		if decoded != nil {
			env = decoded.Bytes()
		}
		upstream = h.forwardEnvelope(r, raw, env)
	}
	h.decodeSegments(t)
	var err error
	pd, samples := h.translate(r.Context(), t, projectID)
	if samples > 0 {
		ctx := h.obsrep.StartProfilesOp(r.Context())
		err = h.next.ConsumeProfiles(ctx, pd)
		h.obsrep.EndProfilesOp(ctx, obsreportFormat, samples, err)
	}
	// The spans go down their pipeline even when the profiles were
	// refused: an SDK does not send a refused envelope again.
	if terr := h.consumeTraces(r.Context(), t, projectID); err == nil {
		err = terr
	}
	if upstream != nil {
		// A transparent proxy answers with the upstream's answer; a
		// pipeline refusal is counted (obsreport) and logged, not told.
		if err != nil {
			h.logger.Debug("Forwarded envelope refused by the pipeline",
				zap.String("project_id", projectID), zap.Error(err))
		}
		h.putTranslation(t)
		pooled = false
		raw.release()
		h.forward.answer(w, <-upstream)
		return
	}
	if err != nil {
		h.refuse(w, projectID, consumerError(err))
		return
	}
	// Items dropped above still get a 200, as from Relay: the envelope was
	// well formed and authorized, the SDK cannot fix the items by sending
	// them again, and an error would only make it report a network failure.
	body := []byte("{}")
	if eventID != "" {
		body = []byte(`{"id":"` + eventID + `"}`)
	}
	writeJSON(w, http.StatusOK, body)
}

// readEnvelope reads the envelope header, authorizes the request (the header
// may carry the dsn), then reads every item. Items stay raw: decoding waits
// until the transactions a V1 profile links to are known.
func (h *envelopeHandler) readEnvelope(t *translation, r *http.Request, projectID string) (string, *requestError) {
	limits := envelope.Limits{
		MaxItemBytes: h.cfg.MaxProfileItemSize,
		MaxItems:     h.cfg.MaxItemsPerEnvelope,
	}
	if t.reader == nil {
		t.reader = envelope.NewReader(r.Body, limits)
	} else {
		t.reader.Reset(r.Body, limits)
	}
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
	for {
		item, err := t.reader.Next()
		if errors.Is(err, io.EOF) {
			return eventID, nil
		}
		if err != nil {
			return "", h.bodyError(err)
		}
		t.items = append(t.items, item)
	}
}

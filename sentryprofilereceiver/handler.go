package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// Envelope item types this receiver reads.
const (
	itemProfile        = "profile"          // V1, bound to the envelope's transaction
	itemProfileChunk   = "profile_chunk"    // V2
	itemProfileChunkUI = "profile_chunk_ui" // alias of profile_chunk some SDKs send
	itemTransaction    = "transaction"      // read only to link V1 profiles
)

// obsreportFormat names the wire format in the receiver's obsreport spans.
const obsreportFormat = "sentry_envelope"

// knownItemTypes are Sentry's published envelope item types. The ignored-items
// metric reports any other type as "unknown": item types are chosen by the
// client, and a metric attribute must not let a client create series.
var knownItemTypes = map[string]struct{}{
	"attachment": {}, "check_in": {}, "client_report": {}, "event": {}, "feedback": {},
	"form_data": {}, "profile": {}, "profile_chunk": {}, "log": {}, "metric_buckets": {}, "nel": {}, "otel_log": {},
	"otel_span": {}, "raw_security": {}, "replay_event": {}, "replay_recording": {},
	"replay_video": {}, "security": {}, "session": {}, "sessions": {}, "span": {},
	"statsd": {}, "trace_metric": {}, "transaction": {}, "unreal_report": {}, "user_report": {},
}

// requestError is a refused request: the status Sentry answers with and a
// short reason for the body. The detail reaches the client and debug logs,
// so it never holds a key or payload content.
type requestError struct {
	status int
	detail string
}

func (e *requestError) Error() string { return fmt.Sprintf("%d %s", e.status, e.detail) }

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

// translation is what an envelope reuses from the one before: the envelope
// reader's buffers, the decoded profile's arrays and the builder's maps and
// scratch space.
type translation struct {
	reader  *envelope.Reader
	items   []envelope.Item
	decoder translator.ItemDecoder
	builder *translator.ProfilesBuilder

	// Of the envelope header: the SDK that sent it (for the drop log) and
	// sent_at (the fallback time of a V1 profile without timestamp).
	sdkName string
	sentAt  string

	// segments are the envelope's transaction and span items, decoded once
	// for the span index and the traces signal.
	segments []decodedSegment
	// released marks the translation of a chunk that was held: it is not
	// held again.
	released bool
}

// decodedSegment is one transaction or span item, decoded (seg) or not
// (err).
type decodedSegment struct {
	item int
	seg  *sentrytrace.Segment
	err  error
}

func (h *envelopeHandler) getTranslation() *translation {
	select {
	case t := <-h.warm:
		return t
	default:
	}
	if t, ok := h.translations.Get().(*translation); ok {
		return t
	}
	return &translation{builder: translator.NewProfilesBuilder(translator.ReceiveOptions{})}
}

func (h *envelopeHandler) putTranslation(t *translation) {
	// The items' payloads live in the reader's memory, which the next
	// envelope reuses; the request body is let go with its connection.
	clear(t.items)
	t.items = t.items[:0]
	clear(t.segments)
	t.segments = t.segments[:0]
	t.sdkName, t.sentAt, t.released = "", "", false
	if t.reader != nil {
		t.reader.Reset(nil, envelope.Limits{})
	}
	select {
	case h.warm <- t:
	default:
		h.translations.Put(t)
	}
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
	t.sentAt = header.SentAt
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

// bodyError maps a failure to read the (decompressed) body. Every size bound
// answers 413, so a client learns that sending less would help.
func (h *envelopeHandler) bodyError(err error) *requestError {
	var tooLarge *http.MaxBytesError
	var syntax *envelope.SyntaxError
	switch {
	case errors.As(err, &tooLarge):
		return &requestError{status: http.StatusRequestEntityTooLarge,
			detail: fmt.Sprintf("envelope exceeds %d bytes after decompression", tooLarge.Limit)}
	case errors.Is(err, envelope.ErrTooManyItems):
		return &requestError{status: http.StatusRequestEntityTooLarge,
			detail: fmt.Sprintf("envelope has more than %d items", h.cfg.MaxItemsPerEnvelope)}
	case errors.Is(err, envelope.ErrHeaderTooLarge):
		return &requestError{status: http.StatusRequestEntityTooLarge, detail: "envelope header line too large"}
	case errors.As(err, &syntax):
		return &requestError{status: http.StatusBadRequest, detail: "invalid envelope: " + syntax.Msg}
	default:
		// Truncated or corrupt compressed streams and dropped connections.
		return &requestError{status: http.StatusBadRequest, detail: "cannot read request body: " + err.Error()}
	}
}

// consumerError maps the next consumer's error. Sentry SDKs drop an envelope
// on any 4xx or 5xx but back off on 429, so a retryable error becomes 429
// and Retry-After rather than the 503 other receivers send.
func consumerError(err error) *requestError {
	if consumererror.IsPermanent(err) {
		return &requestError{status: http.StatusBadRequest, detail: "rejected by the pipeline"}
	}
	return &requestError{status: http.StatusTooManyRequests, detail: "the pipeline is busy; retry later"}
}

func (h *envelopeHandler) refuse(w http.ResponseWriter, projectID string, e *requestError) {
	h.logger.Debug("Envelope refused",
		zap.String("project_id", projectID), zap.Int("status", e.status), zap.String("detail", e.detail))
	if e.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", h.retryAfter)
		w.Header().Set(sentryhttp.HeaderRateLimits, h.rateLimits)
	}
	writeError(w, e)
}

// translate turns the envelope's profile items into one Profiles. A bad item
// is dropped, logged at debug and counted; it never fails the envelope.
func (h *envelopeHandler) translate(ctx context.Context, t *translation, projectID string) (pprofile.Profiles, int) {
	items := t.items
	builder := t.builder
	builder.Reset(translator.ReceiveOptions{
		ServiceName:         h.cfg.ServiceName,
		ProjectID:           projectID,
		KeepOriginalPayload: h.cfg.IncludeOriginalPayload,
		GroupSamples:        h.cfg.GroupSamples,
	})
	var transactions []*sentry.TransactionEvent
	if h.next != nil {
		transactions = h.decodeTransactions(projectID, items)
	}
	v1Profiles := 0
	for i := range items {
		item := &items[i]
		if h.next == nil && !isTraceItem(item.Header.Type) {
			// A traces-only receiver: profiles are not read.
			h.telemetry.ReceiverSentryprofileIgnoredItems.Add(ctx, 1, metric.WithAttributeSet(itemTypeAttribute(item.Header.Type)))
			continue
		}
		switch item.Header.Type {
		case itemProfile:
			// Relay keeps the first V1 profile of an envelope: a transaction
			// has one profile.
			if v1Profiles++; v1Profiles > 1 {
				h.discard(ctx, t, projectID, item, nil, sentry.NewError(sentry.ReasonTooManyProfiles, "a transaction has one profile").AtItem(i))
				continue
			}
		case itemProfileChunk, itemProfileChunkUI:
			if h.links.holding() && !t.released && !item.Oversized {
				if h.links.hold(item, projectID, t.sdkName, t.sentAt) {
					h.telemetry.ReceiverSentryprofileLinkHeldChunks.Add(ctx, 1, metric.WithAttributeSet(holdHeld))
					continue
				}
				h.telemetry.ReceiverSentryprofileLinkHeldChunks.Add(ctx, 1, metric.WithAttributeSet(holdFull))
			}
		default:
			if h.nextTraces != nil && isTraceItem(item.Header.Type) {
				continue // read by translateTraces
			}
			h.telemetry.ReceiverSentryprofileIgnoredItems.Add(ctx, 1, metric.WithAttributeSet(itemTypeAttribute(item.Header.Type)))
			continue
		}
		profile, serr := h.decodeProfile(ctx, t, projectID, i, item)
		if serr != nil {
			h.discard(ctx, t, projectID, item, profile, serr)
			continue
		}
		builder.Add(translator.Item{
			Profile:     profile,
			Transaction: transactionFor(profile, transactions),
			Spans:       h.links.lookup(profile),
			Payload:     item.Payload,
		})
	}
	// Profiles resets the builder: count first.
	samples := builder.SampleCount()
	h.countLinks(ctx, samples, builder.LinkedSampleCount())
	return builder.Profiles(), samples
}

// decodeProfile applies Relay's checks to one profile item in Relay's order:
// size, JSON, normalization, validation. In lenient mode the metadata rules
// an item breaks are counted as warnings and the item is kept. On a
// validation error the decoded profile comes back too, for the drop log.
func (h *envelopeHandler) decodeProfile(ctx context.Context, t *translation, projectID string, i int, item *envelope.Item) (*sentry.Profile, *sentry.Error) {
	t.decoder.Mode, t.decoder.MaxSize = h.mode, h.cfg.MaxProfileItemSize
	// The profile lives in the decoder's memory until its next Decode: the
	// caller adds it to the builder before decoding the next item.
	profile, warnings, serr := t.decoder.Decode(item, fallbackTimestamp(t.sentAt))
	if serr != nil {
		return profile, serr.AtItem(i)
	}
	if item.Header.Type != itemProfile {
		h.checkPlatformHeader(ctx, projectID, i, item, profile)
	}
	for _, w := range warnings {
		h.telemetry.ReceiverSentryprofileItemWarnings.Add(ctx, 1,
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(w.Reason)))))
		h.logger.Debug("Profile item breaks a Relay rule; accepted",
			zap.String("project_id", projectID), zap.Int("item", i), zap.String("reason", string(w.Reason)))
	}
	return profile, nil
}

// fallbackTimestamp is the envelope's sent_at, or now when it is absent or
// unreadable.
func fallbackTimestamp(sentAt string) time.Time {
	if ts, err := time.Parse(time.RFC3339Nano, sentAt); err == nil {
		return ts.UTC()
	}
	return time.Now().UTC()
}

// checkPlatformHeader counts chunks whose item header `platform` is missing
// or disagrees with the payload. Relay requires it since profiles spec 2.4.0,
// but SDKs released before omit it, and dropping their data would help no one.
func (h *envelopeHandler) checkPlatformHeader(ctx context.Context, projectID string, i int, item *envelope.Item, profile *sentry.Profile) {
	var state string
	switch item.Header.Platform {
	case profile.Platform:
		return
	case "":
		state = "missing"
	default:
		state = "different"
	}
	h.telemetry.ReceiverSentryprofilePlatformHeaderMismatches.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("platform_header", state))))
	h.logger.Debug("Profile chunk item header platform does not match its payload; accepted",
		zap.String("project_id", projectID), zap.Int("item", i),
		zap.String("header_platform", item.Header.Platform), zap.String("payload_platform", profile.Platform))
}

// discard counts a dropped item and logs it (rate-limited, at warn): an
// operator whose SDK's profiles do not arrive must not need a metrics
// backend to find out why. profile is the decoded payload, when it decoded.
func (h *envelopeHandler) discard(ctx context.Context, t *translation, projectID string, item *envelope.Item, profile *sentry.Profile, serr *sentry.Error) {
	h.telemetry.ReceiverSentryprofileDiscardedItems.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(serr.Reason)))))
	sdk := t.sdkName
	if profile != nil && profile.ClientSDK.Name != "" {
		sdk = profile.ClientSDK.Name
	}
	h.drops.dropped(droppedItem{itemType: item.Header.Type, reason: serr.Reason, projectID: projectID, sdk: sdk, item: serr.Item})
	h.logger.Debug("Profile item dropped",
		zap.String("project_id", projectID), zap.String("item_type", item.Header.Type),
		zap.String("reason", string(serr.Reason)), zap.Error(serr))
}

// decodeTransactions reads the `transaction` items a V1 profile links to. One
// that cannot be read only costs the links, so it is logged, not refused.
func (h *envelopeHandler) decodeTransactions(projectID string, items []envelope.Item) []*sentry.TransactionEvent {
	var out []*sentry.TransactionEvent
	for i := range items {
		if items[i].Header.Type != itemTransaction || items[i].Oversized {
			continue
		}
		tx, err := sentry.DecodeTransactionEvent(items[i].Payload)
		if err != nil {
			h.logger.Debug("Transaction item unreadable; V1 profiles lose their span links",
				zap.String("project_id", projectID), zap.Int("item", i), zap.Error(err))
			continue
		}
		out = append(out, tx)
	}
	return out
}

// transactionFor picks the transaction a V1 profile names, or the envelope's
// only one; V2 chunks are not bound to a transaction.
func transactionFor(p *sentry.Profile, transactions []*sentry.TransactionEvent) *sentry.TransactionEvent {
	if p.Version == sentry.VersionV2 || len(transactions) == 0 {
		return nil
	}
	for _, t := range p.Transactions {
		for _, tx := range transactions {
			if sameID(t.ID, tx.EventID) {
				return tx
			}
		}
	}
	return transactions[0]
}

func sameID(a, b string) bool {
	ca, okA := canonicalEventID(a)
	cb, okB := canonicalEventID(b)
	return okA && okB && ca != "" && ca == cb
}

func itemTypeAttribute(itemType string) attribute.Set {
	if _, ok := knownItemTypes[itemType]; !ok {
		itemType = "unknown"
	}
	return attribute.NewSet(attribute.String("item_type", itemType))
}

// canonicalProjectID returns the project id as Sentry prints it ("007" is 7).
func canonicalProjectID(s string) (string, bool) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatUint(n, 10), true
}

// canonicalEventID returns a UUID as Sentry answers it: 32 lowercase hex
// digits. Empty stays empty (an envelope may have no event id).
func canonicalEventID(s string) (string, bool) {
	if len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' {
		s = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if s == "" {
		return "", true
	}
	if len(s) != 32 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

func writeError(w http.ResponseWriter, e *requestError) {
	body, err := json.Marshal(struct {
		Detail string `json:"detail"`
	}{e.detail})
	if err != nil { // a string always marshals; keep the status regardless
		body = []byte("{}")
	}
	writeJSON(w, e.status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

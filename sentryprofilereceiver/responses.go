package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Responses: the status and JSON body an SDK gets, as Relay answers, and
// the ids it echoes.

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/relayjson"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// requestError is a refused request: the status Sentry answers with and a
// short reason for the body. The detail reaches the client and debug logs,
// so it never holds a key or payload content.
type requestError struct {
	status int
	detail string
}

func (e *requestError) Error() string { return fmt.Sprintf("%d %s", e.status, e.detail) }

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
	case errors.Is(err, errAuthHeaderTooLarge):
		return &requestError{status: http.StatusRequestEntityTooLarge, detail: err.Error()}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The pacer's deadline (pace.go) or read_timeout.
		return &requestError{status: http.StatusRequestTimeout, detail: "request body too slow"}
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
	switch e.status {
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", h.retryAfter)
		w.Header().Set(sentryhttp.HeaderRateLimits, h.rateLimits)
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout:
		// The rest of the body is not wanted: without this the server
		// would read it (up to 256 KiB, at the client's pace) before it
		// sends the answer, so that a client sending headers and then
		// nothing would wait for read_timeout to learn its key is wrong.
		// Not for 413: that client is still sending its body, and a forced
		// close resets its connection before it reads the answer; net/http
		// closes after a body over its limit itself, waiting for the client
		// to read the 413 first.
		w.Header().Set("Connection", "close")
	}
	writeError(w, e)
}

// canonicalEventID returns a UUID as Sentry answers it: 32 lowercase hex
// digits. Empty stays empty (an envelope may have no event id).
func canonicalEventID(s string) (string, bool) {
	if s == "" {
		return "", true
	}
	return sentry.CanonicalUUID(s)
}

func writeError(w http.ResponseWriter, e *requestError) {
	relayjson.WriteError(w, e.status, e.detail)
}

// writeAccepted answers an envelope the router took. Items it dropped still
// get a 200, as from Relay: the envelope was well formed and authorized,
// the SDK cannot fix the items by sending them again, and an error would
// only make it report a network failure.
func writeAccepted(w http.ResponseWriter, eventID string) {
	body := []byte("{}")
	if eventID != "" {
		body = []byte(`{"id":"` + eventID + `"}`)
	}
	relayjson.Write(w, http.StatusOK, body)
}

package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Item size limits: the largest item of each type the receiver keeps, and
// the refusal of an envelope with an item over its type's limit. The
// admission bounds are in admission.go and pace.go; README.md's "Limits"
// table states every one beside Relay's.

import (
	"fmt"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// Item size limits (the profile items' is max_profile_item_size). Relay
// refuses a whole envelope with 413 when one item is over its type's limit
// (relay-server utils/sizes.rs), and so does the receiver, before it
// answers: an item it would drop for its size is never answered 200. Each
// limit is at least Relay's where the translator can take that much, so
// nothing Sentry keeps is refused, and never above what the translator
// keeps, so nothing answered 200 is dropped for its size.
const (
	// maxSignalItemBytes is what the logs and metrics translators keep of
	// one payload (sentrysignal.DefaultMaxPayloadBytes): check_in
	// (Relay: 100 KiB), statsd (1 MiB), client_report (100 KiB), otel_log,
	// user_report.
	maxSignalItemBytes = sentrysignal.DefaultMaxPayloadBytes
	// maxEventItemBytes bounds the items Relay counts as events (event,
	// transaction, feedback; Relay's max_event_size, 1 MiB). A /store/
	// body is one event. The same bound as the other signal items, as
	// lenient as the event translator.
	maxEventItemBytes = sentrysignal.DefaultMaxPayloadBytes
	// maxContainerItemBytes bounds the containers of many entries (log,
	// trace_metric, span v2): Relay's max_container_size.
	maxContainerItemBytes = 12 << 20
	// maxSessionItemBytes bounds session and sessions items: Relay's
	// max_sessions_size.
	maxSessionItemBytes = 10 << 20
)

// largestFixedItemLimit is the largest limit of itemRoutes' rows; the
// envelope reader skips, unstored, only items larger than this and
// max_profile_item_size.
var largestFixedItemLimit = func() int64 {
	var largest int64
	for _, r := range itemRoutes {
		largest = max(largest, r.maxBytes)
	}
	return largest
}()

// reasonTooLarge is the drop log's reason for an envelope refused with 413
// because of one item's size: Relay's outcome reason for the same refusal.
const reasonTooLarge sentry.Reason = "too_large"

// readerLimits are the envelope reader's bounds: an item larger than every
// type's limit is skipped while it streams past, never stored.
func (h *envelopeHandler) readerLimits() envelope.Limits {
	return envelope.Limits{
		MaxItemBytes: max(h.cfg.MaxProfileItemSize, largestFixedItemLimit),
		MaxItems:     h.cfg.MaxItemsPerEnvelope,
	}
}

// checkItemSize refuses item i of t when it is larger than its type's
// limit: 413 for the whole envelope, logged (rate-limited) with the item's
// type.
func (h *envelopeHandler) checkItemSize(t *envelopeState, i int, projectID string) *requestError {
	item := &t.items[i]
	limit := h.router.itemLimit(item.Header.Type)
	if limit <= 0 || item.Size <= limit {
		return nil
	}
	h.router.drops.dropped(droppedItem{itemType: item.Header.Type, reason: reasonTooLarge,
		projectID: projectID, sdk: t.sdkName, item: i})
	return &requestError{status: http.StatusRequestEntityTooLarge,
		// Only the types itemRoutes names have a limit: the type echoed is
		// one of them, never a client-chosen string.
		detail: fmt.Sprintf("%s item %d exceeds %d bytes", item.Header.Type, i, limit)}
}

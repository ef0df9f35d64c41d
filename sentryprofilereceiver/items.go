package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The envelope's items: which are read, how profile items are decoded,
// checked, linked to their transaction, and dropped with a reason.

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Envelope item types this receiver reads.
const (
	itemProfile        = "profile"          // V1, bound to the envelope's transaction
	itemProfileChunk   = "profile_chunk"    // V2
	itemProfileChunkUI = "profile_chunk_ui" // alias of profile_chunk some SDKs send
	itemTransaction    = "transaction"      // V1 links, the span index, the traces signal
)

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

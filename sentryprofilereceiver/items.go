package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The envelope's items: the translator reads the profile items (which items
// are profiles, decoding, checks, the one-V1-profile rule, V1 transaction
// links, by the rules sentryprof shares); here the receiver counts the items
// it ignores, holds chunks for their spans, and counts, logs and drops.

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Envelope item types this receiver reads; the translator owns which items
// are profiles and how they are read.
const (
	itemProfile        = translator.ItemTypeProfile
	itemProfileChunk   = translator.ItemTypeProfileChunk
	itemProfileChunkUI = translator.ItemTypeProfileChunkUI
	itemTransaction    = translator.ItemTypeTransaction // V1 links, the span index, the traces signal
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
// is dropped, logged at debug and counted; it never fails the envelope. The
// translator reads the items (decoding, checks, the one-V1-profile rule, V1
// pairing); this is what the receiver does around it.
func (h *envelopeHandler) translate(ctx context.Context, t *translation, projectID string) (pprofile.Profiles, int) {
	items := t.items
	builder := t.builder
	builder.Reset(translator.ReceiveOptions{
		ServiceName:         h.cfg.ServiceName,
		ProjectID:           projectID,
		KeepOriginalPayload: h.cfg.IncludeOriginalPayload,
		GroupSamples:        h.cfg.GroupSamples,
	})
	for i := range items {
		typ := items[i].Header.Type
		switch {
		case h.next == nil && !isTraceItem(typ):
			// A traces-only receiver: profiles are not read.
		case h.next != nil && translator.IsProfileItem(typ):
			continue
		case h.nextTraces != nil && isTraceItem(typ):
			continue // read by translateTraces
		}
		h.telemetry.ReceiverSentryprofileIgnoredItems.Add(ctx, 1, metric.WithAttributeSet(itemTypeAttribute(typ)))
	}
	if h.next == nil {
		return builder.Profiles(), 0
	}
	t.decoder.Mode, t.decoder.MaxSize = h.mode, h.cfg.MaxProfileItemSize
	outcomes := t.decoder.ProfileItems(translator.EnvelopeItems{
		Items:   items,
		SentAt:  t.sentAt,
		Arrival: t.arrived,
		Skip: func(_ int, item *envelope.Item) bool {
			return h.holdChunk(ctx, t, projectID, item)
		},
	})
	for o := range outcomes {
		item := &items[o.Index]
		switch o.Kind {
		case translator.TransactionUnreadable:
			h.logger.Debug("Transaction item unreadable; V1 profiles lose their span links",
				zap.String("project_id", projectID), zap.Int("item", o.Index), zap.Error(o.Err))
		case translator.ItemRefused:
			h.discard(ctx, t, projectID, item, o.Item.Profile, o.Err)
		case translator.ItemAccepted:
			h.accepted(ctx, projectID, o, item)
			// The profile lives in the decoder's memory until the next item
			// is decoded: it goes into the builder now.
			o.Item.Spans = h.links.lookup(o.Item.Profile)
			builder.Add(o.Item)
		}
	}
	// Profiles resets the builder: count first.
	samples := builder.SampleCount()
	h.countLinks(ctx, samples, builder.LinkedSampleCount())
	return builder.Profiles(), samples
}

// holdChunk keeps a profile chunk for links::wait, so that it links to spans
// that arrive after it; true when it was held and is translated later.
func (h *envelopeHandler) holdChunk(ctx context.Context, t *translation, projectID string, item *envelope.Item) bool {
	if item.Header.Type == itemProfile || !h.links.holding() || t.released || item.Oversized {
		return false
	}
	if h.links.hold(item, projectID, t.sdkName, t.sentAt) {
		h.telemetry.ReceiverSentryprofileLinkHeldChunks.Add(ctx, 1, metric.WithAttributeSet(holdHeld))
		return true
	}
	h.telemetry.ReceiverSentryprofileLinkHeldChunks.Add(ctx, 1, metric.WithAttributeSet(holdFull))
	return false
}

// accepted checks a chunk's platform header and counts and logs the Relay
// rules an accepted item breaks (lenient mode keeps it).
func (h *envelopeHandler) accepted(ctx context.Context, projectID string, o translator.ItemOutcome, item *envelope.Item) {
	if item.Header.Type != itemProfile {
		h.checkPlatformHeader(ctx, projectID, o.Index, item, o.Item.Profile)
	}
	for _, w := range o.Warnings {
		h.telemetry.ReceiverSentryprofileItemWarnings.Add(ctx, 1,
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(w.Reason)))))
		h.logger.Debug("Profile item breaks a Relay rule; accepted",
			zap.String("project_id", projectID), zap.Int("item", o.Index), zap.String("reason", string(w.Reason)))
	}
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

func itemTypeAttribute(itemType string) attribute.Set {
	if _, ok := knownItemTypes[itemType]; !ok {
		itemType = "unknown"
	}
	return attribute.NewSet(attribute.String("item_type", itemType))
}

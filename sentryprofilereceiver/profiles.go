package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The profiles signal: the translator reads the profile items (decoding,
// checks, the one-V1-profile rule, V1 transaction links); here the router
// holds chunks for their spans, links them, counts, logs and drops.

import (
	"context"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// consumeProfiles translates the envelope's profile items and sends them
// down the profiles pipeline.
func (rt *router) consumeProfiles(ctx context.Context, t *envelopeState, projectID string) error {
	pd, samples, byType := rt.translateProfiles(ctx, t, projectID)
	if samples == 0 {
		return nil
	}
	return rt.sendProfiles(ctx, pd, byType)
}

// sendProfiles hands pd to the profiles pipeline and records the Sentry
// samples it carries, per sample type ("type:unit", as xreceiverhelper
// names it; ProfilesBuilder.SamplesByType, counted as the samples were
// written rather than by reading pd back), as accepted or refused.
func (rt *router) sendProfiles(ctx context.Context, pd pprofile.Profiles, byType map[string]int) error {
	ctx = rt.profilesObsrep.StartProfilesOp(ctx)
	err := rt.profiles.ConsumeProfiles(ctx, pd)
	rt.profilesObsrep.EndProfilesOpBySampleType(ctx, obsreportFormat, byType, err)
	return err
}

// translateProfiles turns the envelope's profile items into one Profiles. A
// bad item is dropped, logged at debug and counted; it never fails the
// envelope.
func (rt *router) translateProfiles(ctx context.Context, t *envelopeState, projectID string) (pprofile.Profiles, int, map[string]int) {
	items := t.items
	builder := t.builder
	builder.Reset(profilesin.ReceiveOptions{
		ServiceName:         rt.cfg.ServiceName,
		ProjectID:           projectID,
		KeepOriginalPayload: rt.cfg.IncludeOriginalPayload,
		GroupSamples:        rt.cfg.GroupSamples,
	})
	t.decoder.Mode, t.decoder.MaxSize = rt.mode, rt.cfg.MaxProfileItemSize
	outcomes := t.decoder.ProfileItems(itemrules.EnvelopeItems{
		Items:      items,
		SentAt:     t.sentAt,
		Arrival:    t.arrived,
		TraceItems: t.traceItems,
		Held:       rt.holdChunks(ctx, t, projectID),
	})
	for o := range outcomes {
		item := &items[o.Index]
		switch o.Kind {
		case itemrules.TransactionUnreadable:
			rt.logger.Debug("Transaction item unreadable; V1 profiles lose their span links",
				zap.String("project_id", projectID), zap.Int("item", o.Index), zap.Error(o.Err))
		case itemrules.ItemRefused:
			rt.discard(ctx, t, projectID, item, o.Decoded.Profile, o.Err)
		case itemrules.ItemAccepted:
			rt.accepted(ctx, projectID, o, item)
			// The profile lives in the decoder's memory until the next item
			// is decoded: it goes into the builder now.
			o.Decoded.Spans = chunkSpans(rt.index, o.Decoded.Profile)
			builder.Add(o.Decoded)
		}
	}
	// Profiles resets the builder: count first.
	samples := builder.SampleCount()
	rt.countLinks(ctx, samples, builder.LinkedSampleCount())
	byType := builder.SamplesByType()
	return builder.Profiles(), samples, byType
}

// holdChunks holds the envelope's profile chunks for links::wait (see
// holdChunk); nil when none is held, else true at the index of each held
// item.
func (rt *router) holdChunks(ctx context.Context, t *envelopeState, projectID string) []bool {
	if rt.hold == nil || t.released {
		return nil
	}
	var held []bool
	for i := range t.items {
		item := &t.items[i]
		if !itemrules.IsProfileItem(item.Header.Type) || !rt.holdChunk(ctx, t, projectID, item) {
			continue
		}
		if held == nil {
			held = make([]bool, len(t.items))
		}
		held[i] = true
	}
	return held
}

// holdChunk keeps a profile chunk for links::wait, so that it links to spans
// that arrive after it; true when it was held and is translated later.
func (rt *router) holdChunk(ctx context.Context, t *envelopeState, projectID string, item *envelope.Item) bool {
	if item.Header.Type == itemrules.ItemTypeProfile || rt.hold == nil || t.released || item.Oversized {
		return false
	}
	if rt.hold.Add(item, projectID, t.sdkName, t.sentAt) {
		rt.telemetry.ReceiverSentryprofileLinkHeldChunks.Add(ctx, 1, metric.WithAttributeSet(holdHeld))
		return true
	}
	rt.telemetry.ReceiverSentryprofileLinkHeldChunks.Add(ctx, 1, metric.WithAttributeSet(holdFull))
	return false
}

// accepted checks a chunk's platform header and counts and logs the
// warnings of an accepted item: a Relay rule it breaks (lenient mode keeps
// it), or what its reading left out (an ART trace's undeclared methods).
func (rt *router) accepted(ctx context.Context, projectID string, o itemrules.ItemOutcome, item *envelope.Item) {
	if item.Header.Type != itemrules.ItemTypeProfile {
		rt.checkPlatformHeader(ctx, projectID, o.Index, item, o.Decoded.Profile)
	}
	for _, w := range o.Warnings {
		rt.telemetry.ReceiverSentryprofileItemWarnings.Add(ctx, 1,
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(w.Reason)))))
		rt.logger.Debug("Profile item accepted with a warning",
			zap.String("project_id", projectID), zap.Int("item", o.Index), zap.String("reason", string(w.Reason)))
	}
}

// checkPlatformHeader counts chunks whose item header `platform` is missing
// or disagrees with the payload. Relay requires it since profiles spec 2.4.0,
// but SDKs released before omit it, and dropping their data would help no one.
func (rt *router) checkPlatformHeader(ctx context.Context, projectID string, i int, item *envelope.Item, profile *sentry.Profile) {
	var state string
	switch item.Header.Platform {
	case profile.Platform:
		return
	case "":
		state = "missing"
	default:
		state = "different"
	}
	rt.telemetry.ReceiverSentryprofilePlatformHeaderMismatches.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("platform_header", state))))
	rt.logger.Debug("Profile chunk item header platform does not match its payload; accepted",
		zap.String("project_id", projectID), zap.Int("item", i),
		zap.String("header_platform", item.Header.Platform), zap.String("payload_platform", profile.Platform))
}

// discard counts a dropped item and logs it (rate-limited, at warn): an
// operator whose SDK's profiles do not arrive must not need a metrics
// backend to find out why. profile is the decoded payload, when it decoded.
func (rt *router) discard(ctx context.Context, t *envelopeState, projectID string, item *envelope.Item, profile *sentry.Profile, serr *sentry.Error) {
	rt.telemetry.ReceiverSentryprofileDiscardedItems.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(serr.Reason)))))
	sdk := t.sdkName
	if profile != nil && profile.ClientSDK.Name != "" {
		sdk = profile.ClientSDK.Name
	}
	rt.drops.dropped(droppedItem{itemType: item.Header.Type, reason: serr.Reason, projectID: projectID, sdk: sdk, item: serr.Item})
	rt.logger.Debug("Profile item dropped",
		zap.String("project_id", projectID), zap.String("item_type", item.Header.Type),
		zap.String("reason", string(serr.Reason)), zap.Error(serr))
}

// countLinks records how many of an envelope's samples got a link.
func (rt *router) countLinks(ctx context.Context, samples, linked int) {
	if samples == 0 {
		return
	}
	rt.telemetry.ReceiverSentryprofileLinkedSamples.Add(ctx, int64(linked), metric.WithAttributeSet(linkedTrue))
	rt.telemetry.ReceiverSentryprofileLinkedSamples.Add(ctx, int64(samples-linked), metric.WithAttributeSet(linkedFalse))
}

var (
	linkedTrue  = attribute.NewSet(attribute.Bool("linked", true))
	linkedFalse = attribute.NewSet(attribute.Bool("linked", false))
	holdHeld    = attribute.NewSet(attribute.String("hold", "held"))
	holdFull    = attribute.NewSet(attribute.String("hold", "full"))
)

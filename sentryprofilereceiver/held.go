package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The consumer of the chunks held for their spans (internal/linkhold), and
// the span index's telemetry.

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/linkhold"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Drop reasons of held chunks, which were answered 200 before they were
// translated: the pipeline refused one, or the receiver's shutdown deadline
// passed before one could be translated.
const (
	reasonHeldChunkRefused  sentry.Reason = "held_chunk_refused_by_pipeline"
	reasonHeldChunkShutdown sentry.Reason = "held_chunk_shutdown_deadline"
)

// releaseHeld translates a held chunk with the spans known now and sends it
// down the profiles pipeline.
//
// Held chunks are answered 200 before they are translated, like every item:
// Sentry SDKs do not send an envelope again whatever the answer, so the SDK
// loses nothing it would have kept; a pipeline that refuses a held chunk is
// counted (refused samples) and logged, and a crash loses the chunks held.
func (rt *router) releaseHeld(ctx context.Context, c linkhold.Chunk) {
	if !rt.slots.acquire(ctx) {
		rt.telemetry.ReceiverSentryprofileDiscardedItems.Add(context.WithoutCancel(ctx), 1,
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(reasonHeldChunkShutdown)))))
		rt.drops.dropped(droppedItem{itemType: c.Item.Header.Type, reason: reasonHeldChunkShutdown,
			projectID: c.ProjectID, sdk: c.SDKName})
		return
	}
	defer rt.slots.release()
	rt.telemetry.ReceiverSentryprofileLinkHoldDuration.Record(ctx, rt.hold.Since(c).Seconds())
	t := rt.pool.get()
	defer rt.pool.put(t)
	t.items = append(t.items, c.Item)
	t.sdkName, t.sentAt, t.arrived, t.released = c.SDKName, c.SentAt, c.Arrived, true
	pd, samples, byType := rt.translateProfiles(ctx, t, c.ProjectID)
	if samples == 0 {
		return
	}
	if err := rt.sendProfiles(ctx, pd, byType); err != nil {
		// Counted by obsreport as refused samples; the log line is the drop
		// log's, rate-limited, since a pipeline that refuses one held chunk
		// refuses many.
		rt.drops.dropped(droppedItem{itemType: c.Item.Header.Type, reason: reasonHeldChunkRefused,
			projectID: c.ProjectID, sdk: c.SDKName})
		rt.logger.Debug("Held profile chunk refused by the pipeline; its SDK was already answered",
			zap.String("project_id", c.ProjectID), zap.Int("samples", samples), zap.Error(err))
	}
}

// newSpanIndex is the span index of the links configuration; nil when
// links are off.
func newSpanIndex(cfg LinksConfig) *spanindex.Index {
	if !cfg.Enabled {
		return nil
	}
	return spanindex.New(spanindex.Limits{
		TTL:                 cfg.SpanTTL,
		MaxSpans:            cfg.MaxSpans,
		MaxSpansPerProfiler: cfg.MaxSpansPerProfiler,
		MaxProfilers:        cfg.MaxProfilers,
		MaxPending:          max(1, cfg.MaxSpans/4),
	})
}

// spansAt is the receiver's span index as the translator asks it for a
// chunk's spans (profilesin.SpanSource), at the time now.
type spansAt struct {
	index *spanindex.Index
	now   time.Time
}

// ProfilerSpans is the index's timeline of profilerID over [from, to];
// nil when it knows none.
func (s spansAt) ProfilerSpans(profilerID string, from, to uint64) profilesin.SpanLookup {
	timeline := s.index.Timeline(s.now, profilerID, from, to)
	if timeline == nil {
		return nil // not a nil *Timeline in a non-nil interface
	}
	return timeline
}

// chunkSpans is the spans of index a V2 chunk may link to; nil when links
// are off.
func chunkSpans(index *spanindex.Index, p *sentry.Profile) profilesin.SpanLookup {
	if index == nil {
		return nil
	}
	return profilesin.ChunkSpans(spansAt{index: index, now: time.Now()}, p)
}

// newChunkHold is the hold of the links configuration; nil when links are
// off or chunks do not wait.
func newChunkHold(cfg LinksConfig) *linkhold.Hold {
	if !cfg.Enabled {
		return nil
	}
	return linkhold.New(linkhold.Limits{Wait: cfg.Wait, MaxChunks: cfg.MaxHeldChunks, MaxBytes: cfg.MaxHeldBytes})
}

// registerSpanIndexMetrics reports the span index's size and evictions.
func registerSpanIndexMetrics(tb *metadata.TelemetryBuilder, index *spanindex.Index) error {
	if index == nil {
		return nil
	}
	if err := tb.RegisterReceiverSentryprofileSpanIndexSpansCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(index.Stats().Spans))
		return nil
	}); err != nil {
		return err
	}
	return tb.RegisterReceiverSentryprofileSpanIndexEvictedSpansCallback(func(_ context.Context, o metric.Int64Observer) error {
		st := index.Stats()
		o.Observe(int64(st.Evicted + st.Rejected))
		return nil
	})
}

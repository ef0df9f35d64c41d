package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/spanindex"
)

// Span attributes (span v2) and data keys (transactions) the span index
// reads.
const (
	keyThreadID  = "thread.id"
	keySegmentID = "sentry.segment.id"
)

// Drop reasons of held chunks, which were answered 200 before they were
// translated: the pipeline refused one, or the receiver's shutdown deadline
// passed before one could be translated.
const (
	reasonHeldChunkRefused  sentry.Reason = "held_chunk_refused_by_pipeline"
	reasonHeldChunkShutdown sentry.Reason = "held_chunk_shutdown_deadline"
)

// chunkLinks links V2 chunk samples to spans: it feeds the span index with
// every transaction and span item, and holds chunks for links::wait so that
// the spans sent after them are known when they are translated.
//
// Held chunks are answered 200 before they are translated, like every item:
// Sentry SDKs do not send an envelope again whatever the answer, so the SDK
// loses nothing it would have kept; a pipeline that refuses a held chunk is
// counted (refused samples) and logged, and a crash loses the chunks held.
type chunkLinks struct {
	index *spanindex.Index
	wait  time.Duration
	now   func() time.Time

	maxChunks int
	maxBytes  int64

	mu    sync.Mutex
	held  []heldChunk // in arrival order, so in order of release
	bytes int64
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

// heldChunk is a chunk item waiting for its spans, with what the envelope
// said of it. Its payload is a copy: the envelope's memory goes to the next
// envelope.
type heldChunk struct {
	item      envelope.Item
	projectID string
	sdkName   string
	sentAt    string
	arrived   time.Time
}

func newChunkLinks(cfg LinksConfig) *chunkLinks {
	if !cfg.Enabled {
		return nil
	}
	return &chunkLinks{
		index: spanindex.New(spanindex.Limits{
			TTL:                 cfg.SpanTTL,
			MaxSpans:            cfg.MaxSpans,
			MaxSpansPerProfiler: cfg.MaxSpansPerProfiler,
			MaxProfilers:        cfg.MaxProfilers,
			MaxPending:          max(1, cfg.MaxSpans/4),
		}),
		wait:      cfg.Wait,
		now:       time.Now,
		maxChunks: cfg.MaxHeldChunks,
		maxBytes:  cfg.MaxHeldBytes,
		wake:      make(chan struct{}, 1),
	}
}

// holding reports whether chunks wait for their spans.
func (l *chunkLinks) holding() bool { return l != nil && l.wait > 0 }

// feed adds the spans of one transaction or span item to the index.
func (l *chunkLinks) feed(seg *sentrytrace.Segment) {
	if l == nil {
		return
	}
	spans := make([]spanindex.Span, 0, len(seg.Spans))
	var root pcommon.SpanID
	for i := range seg.Spans {
		if seg.Spans[i].IsSegment {
			root = translator.ParseSpanID(seg.Spans[i].SpanID)
		}
	}
	for i := range seg.Spans {
		s := &seg.Spans[i]
		if s.Start < 0 || s.End < 0 {
			continue
		}
		entry := spanindex.Span{
			TraceID:    translator.ParseTraceID(s.TraceID),
			SpanID:     translator.ParseSpanID(s.SpanID),
			ProfilerID: s.ProfilerID,
			Start:      uint64(s.Start),
			End:        uint64(s.End),
		}
		// A transaction's spans belong to its root; a streamed span names
		// its segment (and the segment itself).
		entry.SegmentID = root
		for _, a := range s.Attributes {
			switch a.Key {
			case keyThreadID:
				entry.ThreadID = threadIDText(a.Value)
			case keySegmentID:
				if v, ok := a.Value.(string); ok {
					entry.SegmentID = translator.ParseSpanID(v)
				}
			}
		}
		if s.IsSegment {
			entry.SegmentID = entry.SpanID
		}
		spans = append(spans, entry)
	}
	l.index.Add(l.now(), spans)
}

// lookup returns the spans a chunk's samples may link to, or nil.
func (l *chunkLinks) lookup(p *sentry.Profile) translator.SpanLookup {
	if l == nil || p.Version != sentry.VersionV2 || p.ProfilerID == "" || len(p.Samples) == 0 {
		return nil
	}
	first, last := p.Samples[0].Timestamp, p.Samples[0].Timestamp
	for i := range p.Samples {
		first, last = min(first, p.Samples[i].Timestamp), max(last, p.Samples[i].Timestamp)
	}
	if first < 0 {
		first = 0
	}
	if last < 0 {
		return nil
	}
	timeline := l.index.Timeline(l.now(), p.ProfilerID, uint64(first), uint64(last))
	if timeline == nil {
		return nil // not a nil *Timeline in a non-nil interface
	}
	return timeline
}

// hold keeps a chunk item for links::wait; false when the hold is full (or
// not waiting), and the caller translates it at once.
func (l *chunkLinks) hold(item *envelope.Item, projectID, sdkName, sentAt string) bool {
	if !l.holding() || item.Oversized {
		return false
	}
	size := int64(len(item.Payload))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop == nil || len(l.held) >= l.maxChunks || l.bytes+size > l.maxBytes {
		return false
	}
	copied := *item
	copied.Payload = append([]byte(nil), item.Payload...)
	l.held = append(l.held, heldChunk{item: copied, projectID: projectID, sdkName: sdkName, sentAt: sentAt, arrived: l.now()})
	l.bytes += size
	if len(l.held) == 1 {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// start runs the release loop: each held chunk goes to release once its
// wait is over.
func (l *chunkLinks) start(release func(context.Context, heldChunk)) {
	if !l.holding() {
		return
	}
	l.mu.Lock()
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	stop, done := l.stop, l.done
	l.mu.Unlock()
	go func() {
		defer close(done)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for {
			next, due := l.due()
			if due != nil {
				release(context.Background(), *due)
				continue
			}
			if next > 0 {
				timer.Reset(next)
			}
			select {
			case <-stop:
				return
			case <-l.wake:
			case <-timer.C:
			}
		}
	}()
}

// due pops the oldest held chunk if its wait is over; else it says how long
// until it is (0 when nothing is held).
func (l *chunkLinks) due() (time.Duration, *heldChunk) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return 0, nil
	}
	if left := l.held[0].arrived.Add(l.wait).Sub(l.now()); left > 0 {
		return left, nil
	}
	c := l.held[0]
	l.held[0] = heldChunk{}
	l.held = l.held[1:]
	l.bytes -= int64(len(c.item.Payload))
	return 0, &c
}

// shutdown stops the loop and releases every chunk still held: the
// pipeline is still running while its receivers shut down. Once ctx is
// done the chunks left are dropped, and logged by release.
func (l *chunkLinks) shutdown(ctx context.Context, release func(context.Context, heldChunk)) {
	if !l.holding() {
		return
	}
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop = nil // hold refuses from here on
	held := l.held
	l.held, l.bytes = nil, 0
	l.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	for _, c := range held {
		release(ctx, c)
	}
}

// releaseHeld translates a held chunk with the spans known now and sends it
// down the pipeline.
func (h *envelopeHandler) releaseHeld(ctx context.Context, c heldChunk) {
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	case <-ctx.Done():
		h.telemetry.ReceiverSentryprofileDiscardedItems.Add(context.WithoutCancel(ctx), 1,
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(reasonHeldChunkShutdown)))))
		h.drops.dropped(droppedItem{itemType: c.item.Header.Type, reason: reasonHeldChunkShutdown,
			projectID: c.projectID, sdk: c.sdkName})
		return
	}
	h.telemetry.ReceiverSentryprofileLinkHoldDuration.Record(ctx, h.links.now().Sub(c.arrived).Seconds())
	t := h.getTranslation()
	defer h.putTranslation(t)
	t.items = append(t.items, c.item)
	t.sdkName, t.sentAt, t.arrived, t.released = c.sdkName, c.sentAt, c.arrived, true
	pd, samples := h.translate(ctx, t, c.projectID)
	if samples == 0 {
		return
	}
	octx := h.obsrep.StartProfilesOp(ctx)
	err := h.next.ConsumeProfiles(octx, pd)
	h.obsrep.EndProfilesOp(octx, obsreportFormat, samples, err)
	if err != nil {
		// Counted by obsreport as refused samples; the log line is the drop
		// log's, rate-limited, since a pipeline that refuses one held chunk
		// refuses many.
		h.drops.dropped(droppedItem{itemType: c.item.Header.Type, reason: reasonHeldChunkRefused,
			projectID: c.projectID, sdk: c.sdkName})
		h.logger.Debug("Held profile chunk refused by the pipeline; its SDK was already answered",
			zap.String("project_id", c.projectID), zap.Int("samples", samples), zap.Error(err))
	}
}

// registerMetrics reports the span index's size and evictions.
func (l *chunkLinks) registerMetrics(tb *metadata.TelemetryBuilder) error {
	if l == nil {
		return nil
	}
	if err := tb.RegisterReceiverSentryprofileSpanIndexSpansCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(l.index.Stats().Spans))
		return nil
	}); err != nil {
		return err
	}
	return tb.RegisterReceiverSentryprofileSpanIndexEvictedSpansCallback(func(_ context.Context, o metric.Int64Observer) error {
		st := l.index.Stats()
		o.Observe(int64(st.Evicted + st.Rejected))
		return nil
	})
}

// countLinks records how many of a translation's samples got a link.
func (h *envelopeHandler) countLinks(ctx context.Context, samples, linked int) {
	if samples == 0 {
		return
	}
	h.telemetry.ReceiverSentryprofileLinkedSamples.Add(ctx, int64(linked), metric.WithAttributeSet(linkedTrue))
	h.telemetry.ReceiverSentryprofileLinkedSamples.Add(ctx, int64(samples-linked), metric.WithAttributeSet(linkedFalse))
}

var (
	linkedTrue  = attribute.NewSet(attribute.Bool("linked", true))
	linkedFalse = attribute.NewSet(attribute.Bool("linked", false))
	holdHeld    = attribute.NewSet(attribute.String("hold", "held"))
	holdFull    = attribute.NewSet(attribute.String("hold", "full"))
)

// threadIDText renders a span's thread.id (a number or a string) as Sentry
// chunks write thread ids: decimal text.
func threadIDText(v any) string {
	switch id := v.(type) {
	case string:
		return id
	case int64:
		return strconv.FormatInt(id, 10)
	case float64:
		if id >= 0 && id == float64(int64(id)) {
			return strconv.FormatInt(int64(id), 10)
		}
	}
	return ""
}

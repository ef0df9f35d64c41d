package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// Envelope item types the traces signal reads.
const (
	itemSpan = "span" // span streaming: a span v2 container
)

// reasonInvalidTraceItem is the drop log's reason for a trace item that
// cannot be read; Relay has no profiling reason for it.
const reasonInvalidTraceItem sentry.Reason = "invalid_trace_item"

// isTraceItem reports whether the traces signal reads an item of this type.
func isTraceItem(itemType string) bool { return itemType == itemTransaction || itemType == itemSpan }

// translateTraces turns the envelope's transaction and span items into one
// Traces. An item that cannot be read is dropped, counted and logged; the
// others go through.
func (h *envelopeHandler) translateTraces(ctx context.Context, t *translation, projectID string) (ptrace.Traces, int) {
	td := ptrace.NewTraces()
	// One resource for the envelope: what its profiles carry (translate
	// ran first), filled from every segment.
	resource := t.builder.Resource()
	for _, d := range t.segments {
		if d.err == nil {
			resource.Fill(translator.ResourceOfSegment(d.seg))
		}
	}
	opts := translator.TraceOptions{
		ServiceName:     h.cfg.ServiceName,
		ProjectID:       projectID,
		IncludeUserData: h.cfg.IncludeUserData,
		Resource:        &resource,
	}
	spans := 0
	for _, d := range t.segments {
		if d.err != nil {
			h.discardTraceItem(ctx, t, projectID, d.item, &t.items[d.item], d.err.Error())
			continue
		}
		spans += translator.AppendTraces(td, d.seg, opts)
	}
	return td, spans
}

// decodeSegments decodes the envelope's transaction and span items once, for
// the span index and the traces signal, and feeds the index.
func (h *envelopeHandler) decodeSegments(t *translation) {
	if h.links == nil && h.nextTraces == nil {
		return
	}
	for i := range t.items {
		item := &t.items[i]
		var decode func([]byte) (*sentrytrace.Segment, error)
		switch item.Header.Type {
		case itemTransaction:
			decode = sentrytrace.DecodeTransaction
		case itemSpan:
			decode = sentrytrace.DecodeSpans
		default:
			continue
		}
		if item.Oversized {
			t.segments = append(t.segments, decodedSegment{item: i, err: errOversizedTraceItem})
			continue
		}
		seg, err := decode(item.Payload)
		t.segments = append(t.segments, decodedSegment{item: i, seg: seg, err: err})
		if err == nil {
			h.links.feed(seg)
		}
	}
}

var errOversizedTraceItem = errors.New("over max_profile_item_size")

func (h *envelopeHandler) discardTraceItem(ctx context.Context, t *translation, projectID string, i int, item *envelope.Item, why string) {
	h.telemetry.ReceiverSentryprofileDiscardedTraceItems.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("item_type", item.Header.Type))))
	h.drops.dropped(droppedItem{itemType: item.Header.Type, reason: reasonInvalidTraceItem, projectID: projectID, sdk: t.sdkName, item: i})
	h.logger.Debug("Trace item dropped", zap.String("project_id", projectID), zap.Int("item", i),
		zap.String("item_type", item.Header.Type), zap.String("error", why))
}

// consumeTraces sends the envelope's spans down the traces pipeline, when
// there is one.
func (h *envelopeHandler) consumeTraces(ctx context.Context, t *translation, projectID string) error {
	if h.nextTraces == nil {
		return nil
	}
	td, spans := h.translateTraces(ctx, t, projectID)
	if spans == 0 {
		return nil
	}
	ctx = h.obsrep.StartTracesOp(ctx)
	err := h.nextTraces.ConsumeTraces(ctx, td)
	h.obsrep.EndTracesOp(ctx, obsreportFormat, spans, err)
	return err
}

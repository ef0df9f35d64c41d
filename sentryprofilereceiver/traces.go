package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The traces signal: the envelope's transaction and span items, decoded
// once by the router, as spans.

import (
	"context"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// reasonInvalidTraceItem is the drop log's reason for a trace item that
// cannot be read; Relay has no profiling reason for it.
const reasonInvalidTraceItem sentry.Reason = "invalid_trace_item"

// consumeTraces sends the envelope's spans down the traces pipeline.
func (rt *router) consumeTraces(ctx context.Context, t *envelopeState, projectID string) error {
	td, spans := rt.translateTraces(ctx, t, projectID)
	if spans == 0 {
		return nil
	}
	ctx = rt.obsrep.StartTracesOp(ctx)
	err := rt.traces.ConsumeTraces(ctx, td)
	rt.obsrep.EndTracesOp(ctx, obsreportFormat, spans, err)
	return err
}

// translateTraces turns the envelope's decoded transaction and span items
// into one Traces. An item that cannot be read is dropped, counted and
// logged; the others go through.
func (rt *router) translateTraces(ctx context.Context, t *envelopeState, projectID string) (ptrace.Traces, int) {
	td := ptrace.NewTraces()
	// One resource for the envelope: what its profiles carry (translate
	// ran first), filled from every segment.
	resource := t.builder.Resource()
	for _, d := range t.traceItems {
		if d.Err == nil {
			resource.Fill(traceitems.ResourceOfSegment(d.Segment))
		}
	}
	opts := traceitems.TraceOptions{
		ServiceName:     rt.cfg.ServiceName,
		ProjectID:       projectID,
		IncludeUserData: rt.cfg.IncludeUserData,
		Resource:        &resource,
	}
	spans := 0
	for _, d := range t.traceItems {
		if d.Err != nil {
			rt.discardTraceItem(ctx, t, projectID, d.Index, d.Err.Error())
			continue
		}
		spans += traceitems.AppendTraces(td, d.Segment, opts)
	}
	return td, spans
}

func (rt *router) discardTraceItem(ctx context.Context, t *envelopeState, projectID string, i int, why string) {
	itemType := t.items[i].Header.Type
	rt.telemetry.ReceiverSentryprofileDiscardedTraceItems.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("item_type", itemType))))
	rt.drops.dropped(droppedItem{itemType: itemType, reason: reasonInvalidTraceItem, projectID: projectID, sdk: t.sdkName, item: i})
	rt.logger.Debug("Trace item dropped", zap.String("project_id", projectID), zap.Int("item", i),
		zap.String("item_type", itemType), zap.String("error", why))
}

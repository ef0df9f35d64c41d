package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The logs and metrics signals: events, logs, check-ins and feedback as
// log records, metrics and sessions as metrics, all of one envelope under
// one resource (the one its profiles and spans carry, filled from what
// these payloads say of their program). Client reports feed the receiver's
// own telemetry (clientreports.go).

import (
	"context"
	"errors"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// reasonInvalidSignalItem is the drop log's reason for an event, log,
// metric, session, check-in or feedback item that cannot be read.
const reasonInvalidSignalItem sentry.Reason = "invalid_signal_item"

// signalBatch is what one envelope gives the logs and metrics pipelines:
// one ResourceLogs and one ResourceMetrics, under the envelope's resource.
type signalBatch struct {
	logs     plog.Logs
	records  plog.LogRecordSlice
	metrics  pmetric.Metrics
	series   pmetric.MetricSlice
	nRecords int
	nPoints  int
	resource sentryresource.Resource
	// events are the ids of the envelope's events; reports the events its
	// feedback and user reports are about.
	events, reports []string
}

// consumeSignals translates the envelope's log and metric items, counts its
// client reports and sends each signal down its pipeline. A pipeline's
// error is returned (the first); every pipeline is tried.
func (rt *router) consumeSignals(ctx context.Context, t *envelopeState, projectID string) error {
	if !rt.hasSignalItems(t) {
		return nil
	}
	b := rt.translateSignals(ctx, t, projectID)
	err := rt.consumeLogs(ctx, b)
	if merr := rt.consumeMetrics(ctx, b); err == nil {
		err = merr
	}
	return err
}

// consumeLogs sends the batch's records, if any, down the logs pipeline.
func (rt *router) consumeLogs(ctx context.Context, b *signalBatch) error {
	if b.nRecords == 0 {
		return nil
	}
	b.resource.CopyTo(b.logs.ResourceLogs().At(0).Resource())
	lctx := rt.obsrep.StartLogsOp(ctx)
	err := rt.logs.ConsumeLogs(lctx, b.logs)
	rt.obsrep.EndLogsOp(lctx, obsreportFormat, b.nRecords, err)
	return err
}

// consumeMetrics sends the batch's metrics, if any, down the metrics
// pipeline.
func (rt *router) consumeMetrics(ctx context.Context, b *signalBatch) error {
	if b.nPoints == 0 {
		return nil
	}
	b.resource.CopyTo(b.metrics.ResourceMetrics().At(0).Resource())
	mctx := rt.obsrep.StartMetricsOp(ctx)
	err := rt.metrics.ConsumeMetrics(mctx, b.metrics)
	rt.obsrep.EndMetricsOp(mctx, obsreportFormat, b.nPoints, err)
	return err
}

// hasSignalItems reports whether the envelope has an item for the logs or
// metrics signal or the receiver's telemetry, so that an envelope of
// profiles and spans costs nothing here.
func (rt *router) hasSignalItems(t *envelopeState) bool {
	for i := range t.items {
		if rt.signalRoute(t.items[i].Header.Type) != nil {
			return true
		}
	}
	return false
}

// signalRoute is the row of an item read here whose signal has a
// pipeline; nil for any other.
func (rt *router) signalRoute(itemType string) *itemRoute {
	if r := routeByType[itemType]; r != nil && r.isSignal() && rt.consumes(r.signal) {
		return r
	}
	return nil
}

// isSignal reports whether the row is read here: a logs or metrics item,
// or one for the receiver's own telemetry.
func (r *itemRoute) isSignal() bool {
	return r.logs != nil || r.metrics != nil || r.signal == signalTelemetry
}

// translateSignals translates every log and metric item of a configured
// signal into one batch. A bad item is dropped and counted; a container's
// bad entries are dropped and counted, its other entries kept.
func (rt *router) translateSignals(ctx context.Context, t *envelopeState, projectID string) *signalBatch {
	b := &signalBatch{logs: plog.NewLogs(), metrics: pmetric.NewMetrics()}
	b.records = b.logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	b.series = b.metrics.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	b.resource = rt.envelopeResource(t, projectID)
	for i := range t.items {
		if r := rt.signalRoute(t.items[i].Header.Type); r != nil {
			rt.translateSignalItem(ctx, t, projectID, i, r, b)
		}
	}
	rt.resourceOfReports(ctx, b, projectID)
	return b
}

// translateSignalItem adds item i, of row r, to the batch: its records,
// what it says of its program and the events it is or names.
func (rt *router) translateSignalItem(ctx context.Context, t *envelopeState, projectID string, i int, r *itemRoute, b *signalBatch) {
	item := &t.items[i]
	switch {
	case r.signal == signalTelemetry:
		rt.countClientReport(ctx, t, projectID, i)
		return
	case item.Oversized:
		rt.discardSignalItem(ctx, t, projectID, i, errOversizedSignalItem)
		return
	}
	// Each payload is bounded by its route's limit, the one the handler
	// refused larger items by (limits.go); the translators' bound of
	// 10 000 entries a container applies.
	var cut sentrysignal.Truncations
	opts := sentrysignal.Options{IncludeUserData: rt.cfg.IncludeUserData, MaxPayloadBytes: int(r.maxBytes), Truncations: &cut}
	facts, err := b.add(r, item.Payload, opts)
	b.note(facts)
	if err != nil {
		rt.signalItemError(ctx, t, projectID, i, err)
	}
	rt.countTruncations(ctx, item.Header.Type, cut)
}

// add decodes one item by its row and appends its records or metrics.
func (b *signalBatch) add(r *itemRoute, payload []byte, opts sentrysignal.Options) (sentrysignal.Facts, error) {
	if r.logs != nil {
		logs, err := r.logs(payload, opts)
		if logs.Append != nil {
			b.nRecords += logs.Append(b.records)
		}
		return logs.Facts, err
	}
	metrics, err := r.metrics(payload, opts)
	if metrics.Append != nil {
		b.nPoints += metrics.Append(b.series)
	}
	return metrics.Facts, err
}

// note takes what an item's translator says besides its records: the
// resource it names fills the envelope's, in item order; its event ids
// are remembered or looked up (resourceOfReports).
func (b *signalBatch) note(facts sentrysignal.Facts) {
	b.resource.Fill(facts.Resource)
	if facts.EventID != "" {
		b.events = append(b.events, facts.EventID)
	}
	if facts.AboutEventID != "" {
		b.reports = append(b.reports, facts.AboutEventID)
	}
}

// resourceOfReports remembers the resource of the envelope's events, and
// gives the feedback of an envelope without events the resource its event
// was sent under, when that was seen recently (eventmemory.go).
func (rt *router) resourceOfReports(ctx context.Context, b *signalBatch, projectID string) {
	events, reports := b.events, b.reports
	for _, id := range events {
		rt.events.remember(projectID, id, b.resource)
	}
	if len(reports) == 0 {
		return
	}
	source := "envelope"
	if len(events) == 0 {
		source = rt.fillFromEvents(b, projectID, reports)
	}
	rt.telemetry.ReceiverSentryprofileFeedbackResources.Add(ctx, int64(len(reports)),
		metric.WithAttributeSet(attribute.NewSet(attribute.String("event_resource", source))))
}

// fillFromEvents fills the batch's resource from the first of the
// reports' events that is remembered; it says which source it took.
func (rt *router) fillFromEvents(b *signalBatch, projectID string, reports []string) string {
	for _, id := range reports {
		if res, ok := rt.events.lookup(projectID, id); ok {
			b.resource.Fill(res)
			return "remembered"
		}
	}
	return "not_seen"
}

// countTruncations counts what one item's translation cut at the
// translators' bounds; the records themselves were kept. Only routed item
// types get here, so item_type stays a short list.
func (rt *router) countTruncations(ctx context.Context, itemType string, cut sentrysignal.Truncations) {
	for truncation, n := range map[string]int{"attributes": cut.Attributes, "message": cut.Messages} {
		if n > 0 {
			rt.telemetry.ReceiverSentryprofileSignalTruncations.Add(ctx, int64(n), metric.WithAttributeSet(attribute.NewSet(
				attribute.String("item_type", itemType), attribute.String("truncation", truncation))))
		}
	}
}

var errOversizedSignalItem = errors.New("over max_profile_item_size")

// envelopeResource is the resource the envelope's profiles and spans
// carry: the profiles' (when that signal ran), filled from the decoded
// segments, under the receiver's service name and the request's project.
// The signal items fill it further, in item order.
func (rt *router) envelopeResource(t *envelopeState, projectID string) sentryresource.Resource {
	var res sentryresource.Resource
	if rt.profiles != nil {
		res = t.builder.Resource()
	}
	for _, d := range t.traceItems {
		if d.Err == nil {
			res.Fill(traceitems.ResourceOfSegment(d.Segment))
		}
	}
	res.ServiceName = rt.cfg.ServiceName
	res.ProjectID = projectID
	return res
}

// signalItemError counts what a translator refused: the entries a
// *PartialError names, or the whole item.
func (rt *router) signalItemError(ctx context.Context, t *envelopeState, projectID string, i int, err error) {
	var partial *sentrysignal.PartialError
	if errors.As(err, &partial) {
		itemType := t.items[i].Header.Type
		rt.telemetry.ReceiverSentryprofileDiscardedSignalItems.Add(ctx, int64(partial.Dropped),
			metric.WithAttributeSet(attribute.NewSet(attribute.String("item_type", itemType), attribute.String("drop_scope", "entry"))))
		rt.logger.Debug("Entries of an item dropped", zap.String("project_id", projectID), zap.Int("item", i),
			zap.String("item_type", itemType), zap.Int("dropped", partial.Dropped), zap.Error(err))
		return
	}
	rt.discardSignalItem(ctx, t, projectID, i, err)
}

func (rt *router) discardSignalItem(ctx context.Context, t *envelopeState, projectID string, i int, err error) {
	itemType := t.items[i].Header.Type
	rt.telemetry.ReceiverSentryprofileDiscardedSignalItems.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("item_type", itemType), attribute.String("drop_scope", "item"))))
	rt.drops.dropped(droppedItem{itemType: itemType, reason: reasonInvalidSignalItem, projectID: projectID, sdk: t.sdkName, item: i})
	rt.logger.Debug("Item dropped", zap.String("project_id", projectID), zap.Int("item", i),
		zap.String("item_type", itemType), zap.Error(err))
}

package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// The logs and metrics signals: events, logs, check-ins and feedback as
// log records, metrics and sessions as metrics, all of one envelope under
// one resource (the one its profiles and spans carry, filled from what
// these payloads say of their program). Client reports feed the receiver's
// own telemetry (clientreports.go).

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrycheckin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryfeedback"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysession"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// reasonInvalidSignalItem is the drop log's reason for an event, log,
// metric, session, check-in or feedback item that cannot be read.
const reasonInvalidSignalItem sentry.Reason = "invalid_signal_item"

// appendLogs translates one item into records appended to dst and fills
// res from what the payload says of its program.
type appendLogs func(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice, res *translator.Resource) (int, error)

// appendMetrics translates one item into metrics appended to dst and fills
// res likewise.
type appendMetrics func(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice, res *translator.Resource) (int, error)

// eventLogs: an "event" item (or a /store/ body) as one record; its
// release, environment, sdk and contexts fill the resource.
func eventLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice, res *translator.Resource) (int, error) {
	ev, err := sentryevent.Decode(payload, opts)
	if err != nil {
		return 0, err
	}
	ev.PutLogRecord(dst.AppendEmpty(), opts)
	res.Fill(translator.ResourceOfSignal(ev.Resource))
	return 1, nil
}

// feedbackLogs: a "feedback" item as one record; its event's resource
// fields fill the resource, as an event's do.
func feedbackLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice, res *translator.Resource) (int, error) {
	ev, err := sentryfeedback.DecodeFeedback(payload, opts)
	if err != nil {
		return 0, err
	}
	sentryfeedback.PutFeedback(dst.AppendEmpty(), ev, opts)
	res.Fill(translator.ResourceOfSignal(ev.Resource))
	return 1, nil
}

// checkInLogs: a "check_in" item as one record; its release and
// environment fill the resource.
func checkInLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice, res *translator.Resource) (int, error) {
	c, err := sentrycheckin.Decode(payload, opts)
	if err != nil {
		return 0, err
	}
	c.PutLogRecord(dst.AppendEmpty(), opts)
	res.Fill(translator.ResourceOfSignal(c.Resource))
	return 1, nil
}

// sessionMetrics: a "session" update as metrics; its attrs.release and
// attrs.environment fill the resource.
func sessionMetrics(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice, res *translator.Resource) (int, error) {
	u, err := sentrysession.DecodeUpdate(payload, opts)
	if err != nil {
		return 0, err
	}
	res.Fill(translator.ResourceOfSignal(u.Resource))
	return u.AppendMetrics(dst), nil
}

// containerLogs wraps a translator of a container item (log, otel_log,
// user_report): its entries carry release and environment as attributes,
// which fill the resource where present.
func containerLogs(f func([]byte, sentrysignal.Options, plog.LogRecordSlice) (int, error)) appendLogs {
	return func(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice, res *translator.Resource) (int, error) {
		from := dst.Len()
		n, err := f(payload, opts, dst)
		for i := from; i < dst.Len(); i++ {
			res.Fill(resourceOfAttributes(dst.At(i).Attributes()))
		}
		return n, err
	}
}

// containerMetrics wraps a translator of a metrics container
// (trace_metric, statsd, sessions) likewise, reading its points'
// attributes.
func containerMetrics(f func([]byte, sentrysignal.Options, pmetric.MetricSlice) (int, error)) appendMetrics {
	return func(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice, res *translator.Resource) (int, error) {
		from := dst.Len()
		n, err := f(payload, opts, dst)
		for i := from; i < dst.Len(); i++ {
			if attrs, ok := firstPointAttributes(dst.At(i)); ok {
				res.Fill(resourceOfAttributes(attrs))
			}
		}
		return n, err
	}
}

// Attributes of container entries that name their program.
const (
	attrSentryRelease     = sentryattr.Release
	attrSentryEnvironment = sentryattr.Environment
	attrSentrySDKName     = sentryattr.SDKName
	attrSentrySDKVersion  = sentryattr.SDKVersion
)

// resourceOfAttributes reads an entry's "sentry.release",
// "sentry.environment", "sentry.sdk.name", "sentry.sdk.version" and
// "server.address" (the SDK's server_name) attributes.
func resourceOfAttributes(attrs pcommon.Map) translator.Resource {
	str := func(k string) string {
		if v, ok := attrs.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	r := translator.Resource{
		Release:     str(attrSentryRelease),
		Environment: str(attrSentryEnvironment),
		ServerName:  str(string(semconv.ServerAddressKey)),
	}
	r.SDK.Name, r.SDK.Version = str(attrSentrySDKName), str(attrSentrySDKVersion)
	return r
}

// firstPointAttributes are the attributes of a metric's first data point.
func firstPointAttributes(m pmetric.Metric) (pcommon.Map, bool) {
	switch m.Type() {
	case pmetric.MetricTypeSum:
		if m.Sum().DataPoints().Len() > 0 {
			return m.Sum().DataPoints().At(0).Attributes(), true
		}
	case pmetric.MetricTypeGauge:
		if m.Gauge().DataPoints().Len() > 0 {
			return m.Gauge().DataPoints().At(0).Attributes(), true
		}
	case pmetric.MetricTypeExponentialHistogram:
		if m.ExponentialHistogram().DataPoints().Len() > 0 {
			return m.ExponentialHistogram().DataPoints().At(0).Attributes(), true
		}
	case pmetric.MetricTypeHistogram:
		if m.Histogram().DataPoints().Len() > 0 {
			return m.Histogram().DataPoints().At(0).Attributes(), true
		}
	case pmetric.MetricTypeSummary:
		if m.Summary().DataPoints().Len() > 0 {
			return m.Summary().DataPoints().At(0).Attributes(), true
		}
	}
	return pcommon.Map{}, false
}

// signalBatch is what one envelope gives the logs and metrics pipelines:
// one ResourceLogs and one ResourceMetrics, under the envelope's resource.
type signalBatch struct {
	logs     plog.Logs
	records  plog.LogRecordSlice
	metrics  pmetric.Metrics
	series   pmetric.MetricSlice
	nRecords int
	nPoints  int
	resource translator.Resource
}

// consumeSignals translates the envelope's log and metric items, counts its
// client reports and sends each signal down its pipeline. A pipeline's
// error is returned (the first); every pipeline is tried.
func (rt *router) consumeSignals(ctx context.Context, t *translation, projectID string) error {
	if !rt.hasSignalItems(t) {
		return nil
	}
	b := rt.translateSignals(ctx, t, projectID)
	var err error
	if b.nRecords > 0 {
		b.resource.CopyTo(b.logs.ResourceLogs().At(0).Resource())
		lctx := rt.obsrep.StartLogsOp(ctx)
		err = rt.logs.ConsumeLogs(lctx, b.logs)
		rt.obsrep.EndLogsOp(lctx, obsreportFormat, b.nRecords, err)
	}
	if b.nPoints > 0 {
		b.resource.CopyTo(b.metrics.ResourceMetrics().At(0).Resource())
		mctx := rt.obsrep.StartMetricsOp(ctx)
		merr := rt.metrics.ConsumeMetrics(mctx, b.metrics)
		rt.obsrep.EndMetricsOp(mctx, obsreportFormat, b.nPoints, merr)
		if err == nil {
			err = merr
		}
	}
	return err
}

// hasSignalItems reports whether the envelope has an item for the logs or
// metrics signal or the receiver's telemetry, so that an envelope of
// profiles and spans costs nothing here.
func (rt *router) hasSignalItems(t *translation) bool {
	for i := range t.items {
		if r := routeByType[t.items[i].Header.Type]; r != nil && r.isSignal() && rt.consumes(r.signal) {
			return true
		}
	}
	return false
}

// isSignal reports whether the row is read here: a logs or metrics item,
// or one for the receiver's own telemetry.
func (r *itemRoute) isSignal() bool {
	return r.logs != nil || r.metrics != nil || r.signal == signalTelemetry
}

// translateSignals translates every log and metric item of a configured
// signal into one batch. A bad item is dropped and counted; a container's
// bad entries are dropped and counted, its other entries kept.
func (rt *router) translateSignals(ctx context.Context, t *translation, projectID string) *signalBatch {
	b := &signalBatch{logs: plog.NewLogs(), metrics: pmetric.NewMetrics()}
	b.records = b.logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	b.series = b.metrics.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	b.resource = rt.envelopeResource(t, projectID)
	// Each payload is bounded by its route's limit, the one the handler
	// refused larger items by (limits.go); the translators' bound of
	// 10 000 entries a container applies.
	opts := sentrysignal.Options{IncludeUserData: rt.cfg.IncludeUserData}
	var cut sentrysignal.Truncations
	opts.Truncations = &cut
	var events, reports []string // event ids seen, and those feedback names
	for i := range t.items {
		item := &t.items[i]
		r := routeByType[item.Header.Type]
		if r == nil || !r.isSignal() || !rt.consumes(r.signal) {
			continue
		}
		if r.signal == signalTelemetry {
			rt.countClientReport(ctx, t, projectID, i)
			continue
		}
		if item.Oversized {
			rt.discardSignalItem(ctx, t, projectID, i, errOversizedSignalItem)
			continue
		}
		opts.MaxPayloadBytes = int(r.maxBytes)
		cut = sentrysignal.Truncations{}
		var n int
		var err error
		if r.logs != nil {
			from := b.records.Len()
			n, err = r.logs(item.Payload, opts, b.records, &b.resource)
			b.nRecords += n
			events, reports = eventReferences(item.Header.Type, b.records, from, events, reports)
		} else {
			n, err = r.metrics(item.Payload, opts, b.series, &b.resource)
			b.nPoints += n
		}
		if err != nil {
			rt.signalItemError(ctx, t, projectID, i, err)
		}
		rt.countTruncations(ctx, item.Header.Type, cut)
	}
	rt.resourceOfReports(ctx, b, projectID, events, reports)
	return b
}

// eventReferences appends to events the ids of the event records an item
// wrote from index from on (log.record.uid), and to reports the events
// its feedback and user report records name.
func eventReferences(itemType string, records plog.LogRecordSlice, from int, events, reports []string) ([]string, []string) {
	key, list := "", &events
	switch itemType {
	case sentryevent.ItemType:
		key = string(semconv.LogRecordUIDKey)
	case sentryfeedback.ItemFeedback, sentryfeedback.ItemUserReport:
		key, list = sentryfeedback.AttrAssociatedEventID, &reports
	default:
		return events, reports
	}
	for i := from; i < records.Len(); i++ {
		if v, ok := records.At(i).Attributes().Get(key); ok && v.Str() != "" {
			*list = append(*list, v.Str())
		}
	}
	return events, reports
}

// resourceOfReports remembers the resource of the envelope's events, and
// gives the feedback of an envelope without events the resource its event
// was sent under, when that was seen recently (eventmemory.go).
func (rt *router) resourceOfReports(ctx context.Context, b *signalBatch, projectID string, events, reports []string) {
	for _, id := range events {
		rt.events.remember(projectID, id, b.resource)
	}
	if len(reports) == 0 {
		return
	}
	source := "envelope"
	if len(events) == 0 {
		source = "not_seen"
		for _, id := range reports {
			if res, ok := rt.events.lookup(projectID, id); ok {
				b.resource.Fill(res)
				source = "remembered"
				break
			}
		}
	}
	rt.telemetry.ReceiverSentryprofileFeedbackResources.Add(ctx, int64(len(reports)),
		metric.WithAttributeSet(attribute.NewSet(attribute.String("event_resource", source))))
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
func (rt *router) envelopeResource(t *translation, projectID string) translator.Resource {
	var res translator.Resource
	if rt.profiles != nil {
		res = t.builder.Resource()
	}
	for _, d := range t.segments {
		if d.err == nil {
			res.Fill(traceitems.ResourceOfSegment(d.seg))
		}
	}
	res.ServiceName = rt.cfg.ServiceName
	res.ProjectID = projectID
	return res
}

// signalItemError counts what a translator refused: the entries a
// *PartialError names, or the whole item.
func (rt *router) signalItemError(ctx context.Context, t *translation, projectID string, i int, err error) {
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

func (rt *router) discardSignalItem(ctx context.Context, t *translation, projectID string, i int, err error) {
	itemType := t.items[i].Header.Type
	rt.telemetry.ReceiverSentryprofileDiscardedSignalItems.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("item_type", itemType), attribute.String("drop_scope", "item"))))
	rt.drops.dropped(droppedItem{itemType: itemType, reason: reasonInvalidSignalItem, projectID: projectID, sdk: t.sdkName, item: i})
	rt.logger.Debug("Item dropped", zap.String("project_id", projectID), zap.Int("item", i),
		zap.String("item_type", itemType), zap.Error(err))
}

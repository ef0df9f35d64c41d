package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/collector/receiver/receiverhelper/xreceiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/linkhold"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrycheckin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryclientreport"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryfeedback"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrylog"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrymetric"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysession"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// signal is the pipeline an envelope item feeds.
type signal string

const (
	signalProfiles signal = "profiles"
	signalTraces   signal = "traces"
	signalLogs     signal = "logs"
	signalMetrics  signal = "metrics"
	// signalTelemetry is the receiver's own telemetry: what an item says
	// is counted, not sent down a pipeline.
	signalTelemetry signal = "telemetry"
)

// itemRoute is one row of the router's table: an envelope item type, the
// signal it feeds and the translator that reads it.
type itemRoute struct {
	itemType string
	signal   signal
	// translator names what reads the item (ARCHITECTURE.md's table is
	// checked against it).
	translator string
	// logs and metrics decode an item of those signals into what it says
	// of its program and the records or metrics it appends to the
	// envelope's (signals.go).
	logs    sentrysignal.LogsDecoder
	metrics sentrysignal.MetricsDecoder
	// maxBytes is the largest payload of this type the receiver keeps
	// (limits.go); 0 on the profile rows, whose bound is
	// max_profile_item_size.
	maxBytes int64
}

// itemRoutes is every item type the receiver reads. An item of another
// type, or of a signal without a pipeline, is counted as ignored.
//
// Profile items are read together by itemrules.ItemDecoder, which applies
// the envelope-wide rules (one V1 profile per envelope, a V1 profile's
// transaction, taken from the trace items decoded here with
// sentrytrace.AppendItems). Every item is decoded once, here or by the
// ItemDecoder.
var itemRoutes = []itemRoute{
	{itemType: itemrules.ItemTypeProfile, signal: signalProfiles, translator: "itemrules.ItemDecoder"},
	{itemType: itemrules.ItemTypeProfileChunk, signal: signalProfiles, translator: "itemrules.ItemDecoder"},
	{itemType: itemrules.ItemTypeProfileChunkUI, signal: signalProfiles, translator: "itemrules.ItemDecoder"},
	{itemType: sentrytrace.ItemTypeTransaction, signal: signalTraces, translator: "sentrytrace.DecodeTransaction",
		maxBytes: maxEventItemBytes},
	{itemType: sentrytrace.ItemTypeSpan, signal: signalTraces, translator: "sentrytrace.DecodeSpans",
		maxBytes: maxContainerItemBytes},
	{itemType: sentryevent.ItemType, signal: signalLogs, translator: "sentryevent.Logs", logs: sentryevent.Logs,
		maxBytes: maxEventItemBytes},
	{itemType: sentrylog.ItemType, signal: signalLogs, translator: "sentrylog.Logs", logs: sentrylog.Logs,
		maxBytes: maxContainerItemBytes},
	{itemType: sentrylog.OTelItemType, signal: signalLogs, translator: "sentrylog.OTelLogs", logs: sentrylog.OTelLogs,
		maxBytes: maxSignalItemBytes},
	{itemType: sentrycheckin.ItemType, signal: signalLogs, translator: "sentrycheckin.Logs", logs: sentrycheckin.Logs,
		maxBytes: maxSignalItemBytes},
	{itemType: sentryfeedback.ItemFeedback, signal: signalLogs, translator: "sentryfeedback.FeedbackLogs", logs: sentryfeedback.FeedbackLogs,
		maxBytes: maxEventItemBytes},
	{itemType: sentryfeedback.ItemUserReport, signal: signalLogs, translator: "sentryfeedback.UserReportLogs", logs: sentryfeedback.UserReportLogs,
		maxBytes: maxSignalItemBytes},
	{itemType: sentrymetric.ItemType, signal: signalMetrics, translator: "sentrymetric.Metrics", metrics: sentrymetric.Metrics,
		maxBytes: maxContainerItemBytes},
	{itemType: sentrymetric.StatsdItemType, signal: signalMetrics, translator: "sentrymetric.StatsdMetrics", metrics: sentrymetric.StatsdMetrics,
		maxBytes: maxSignalItemBytes},
	{itemType: sentrysession.ItemSession, signal: signalMetrics, translator: "sentrysession.UpdateMetrics", metrics: sentrysession.UpdateMetrics,
		maxBytes: maxSessionItemBytes},
	{itemType: sentrysession.ItemSessions, signal: signalMetrics, translator: "sentrysession.AggregateMetrics", metrics: sentrysession.AggregateMetrics,
		maxBytes: maxSessionItemBytes},
	{itemType: sentryclientreport.ItemType, signal: signalTelemetry, translator: "sentryclientreport.Decode",
		maxBytes: maxSignalItemBytes},
}

// routeByType indexes itemRoutes.
var routeByType = func() map[string]*itemRoute {
	m := make(map[string]*itemRoute, len(itemRoutes))
	for i := range itemRoutes {
		m[itemRoutes[i].itemType] = &itemRoutes[i]
	}
	return m
}()

// itemLimit is the largest payload of an item type the receiver keeps: a
// larger item refuses its envelope (limits.go). 0 for the types it does not
// read, which only max_request_body_size bounds, as Relay bounds unknown
// types only by the envelope.
func (rt *router) itemLimit(itemType string) int64 {
	r := routeByType[itemType]
	switch {
	case r == nil:
		return 0
	case r.signal == signalProfiles:
		return rt.cfg.MaxProfileItemSize
	}
	return r.maxBytes
}

// knownItemTypes are Sentry's published envelope item types. The ignored-items
// metric reports any other type as "unknown": item types are chosen by the
// client, and a metric attribute must not let a client create series.
var knownItemTypes = map[string]struct{}{
	"attachment": {}, "check_in": {}, "client_report": {}, "event": {}, "feedback": {},
	"form_data": {}, "profile": {}, "profile_chunk": {}, "log": {}, "metric_buckets": {}, "nel": {}, "otel_log": {},
	"otel_span": {}, "raw_security": {}, "replay_event": {}, "replay_recording": {},
	"replay_video": {}, "security": {}, "session": {}, "sessions": {}, sentrytrace.ItemTypeSpan: {},
	"statsd": {}, "trace_metric": {}, sentrytrace.ItemTypeTransaction: {}, "unreal_report": {}, "user_report": {},
}

// router sends an envelope's items to the pipelines, each by its row of
// itemRoutes: it decodes the trace items once (feeding the span index),
// translates the profile items (holding chunks for their spans) and the
// trace items, and consumes each signal.
type router struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	obsrep    *receiverhelper.ObsReport
	// profilesObsrep counts the profiles signal per sample type.
	profilesObsrep *xreceiverhelper.ObsReport
	drops          *dropLog
	// mode is which of Relay's rules drop an item (config `validation`).
	mode sentry.Mode

	// profiles and traces are the pipelines of the signals configured;
	// either may be nil.
	profiles xconsumer.Profiles
	traces   consumer.Traces
	logs     consumer.Logs
	metrics  consumer.Metrics

	// index keeps recent spans for chunk samples to link to; nil when
	// links::enabled is off. hold keeps chunks for links::wait; nil when
	// they are translated at once.
	index *spanindex.Index
	hold  *linkhold.Hold
	// slots bounds the envelope states running; a held chunk's release takes
	// one like an envelope.
	slots envelopeSlots
	pool  *envelopeStatePool
	// events remembers recent events' resources for the feedback sent
	// apart from them (eventmemory.go).
	events *eventResources
}

// consumes reports whether a signal has a pipeline.
func (rt *router) consumes(s signal) bool {
	switch s {
	case signalProfiles:
		return rt.profiles != nil
	case signalTraces:
		return rt.traces != nil
	case signalLogs:
		return rt.logs != nil
	case signalMetrics:
		return rt.metrics != nil
	case signalTelemetry:
		return true
	}
	return false
}

// route translates an envelope's items and sends them down their
// pipelines. Items a translator refuses are counted and dropped; the error
// is a pipeline's. The spans go down their pipeline even when the profiles
// were refused: an SDK does not send a refused envelope again.
func (rt *router) route(ctx context.Context, t *envelopeState, projectID string) error {
	rt.countIgnored(ctx, t)
	rt.decodeTraceItems(t)
	var err error
	if rt.profiles != nil {
		err = rt.consumeProfiles(ctx, t, projectID)
	}
	if rt.traces != nil {
		if terr := rt.consumeTraces(ctx, t, projectID); err == nil {
			err = terr
		}
	}
	if serr := rt.consumeSignals(ctx, t, projectID); err == nil {
		err = serr
	}
	return err
}

// countIgnored counts the items no pipeline takes.
func (rt *router) countIgnored(ctx context.Context, t *envelopeState) {
	for i := range t.items {
		typ := t.items[i].Header.Type
		if r := routeByType[typ]; r != nil && rt.consumes(r.signal) {
			continue
		}
		rt.telemetry.ReceiverSentryprofileIgnoredItems.Add(ctx, 1, metric.WithAttributeSet(itemTypeAttribute(typ)))
	}
}

// decodeTraceItems decodes the envelope's trace items once
// (sentrytrace.AppendItems), for the span index, the traces signal and the
// profiles (their resource, a V1 profile's transaction), and feeds the
// index.
func (rt *router) decodeTraceItems(t *envelopeState) {
	if rt.index == nil && rt.traces == nil && (rt.profiles == nil || !hasProfileItem(t.items)) {
		return
	}
	t.traceItems = sentrytrace.AppendItems(t.traceItems, t.items)
	if rt.index == nil {
		return
	}
	for _, d := range t.traceItems {
		if d.Err == nil {
			rt.index.Add(time.Now(), traceitems.IndexSpans(d.Segment))
		}
	}
}

// hasProfileItem reports whether any of items holds a profile.
func hasProfileItem(items []envelope.Item) bool {
	for i := range items {
		if itemrules.IsProfileItem(items[i].Header.Type) {
			return true
		}
	}
	return false
}

func itemTypeAttribute(itemType string) attribute.Set {
	if _, ok := knownItemTypes[itemType]; !ok {
		itemType = "unknown"
	}
	return attribute.NewSet(attribute.String("item_type", itemType))
}

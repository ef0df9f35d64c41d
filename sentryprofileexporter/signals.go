package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/otelevent"
)

// Item types and rate-limit categories of the signals beside profiles
// (Relay's ItemType and DataCategory names).
const (
	itemTypeEvent       = "event"
	itemTypeTraceMetric = "trace_metric"
	categoryError       = "error"
	categoryTraceMetric = "trace_metric"
	// contentTypeTraceMetric is the container's content type as the
	// JavaScript and Python SDKs write it.
	contentTypeTraceMetric = "application/vnd.sentry.items.trace-metric+json"
)

// signal is one of the item kinds the logs, traces and metrics pipelines
// send: how its items travel and how they are counted.
type signal struct {
	name     string // for logs: "events" or "metrics"
	itemType string
	category string
	sent     metric.Int64Counter
	dropped  metric.Int64Counter
}

// signalItem is one encoded item: an error event of one resource (count
// 1) or a trace_metric container of the resources of one project (count =
// its items).
type signalItem struct {
	resources map[int]int // items of each resource in it
	eventID   string
	payload   []byte
	count     int
}

// firstResource is the lowest resource of an item, which names its project.
func (it signalItem) firstResource() int {
	first := -1
	for r := range it.resources {
		if first < 0 || r < first {
			first = r
		}
	}
	return first
}

// signalOutcome is what delivering a request's items came to, by resource.
type signalOutcome struct {
	retryWait
	permErrs []error
	// retried: resource → true when a failure other than a rate limit is
	// among its reasons.
	retried map[int]bool
	unsent  map[int]int // resource → items not yet accepted or dropped for good
}

func (e *sentryExporter) eventsSignal() *signal {
	return &signal{name: "events", itemType: itemTypeEvent, category: categoryError,
		sent: e.telemetry.ExporterSentryprofileEventsSent, dropped: e.telemetry.ExporterSentryprofileEventsDropped}
}

func (e *sentryExporter) metricsSignal() *signal {
	return &signal{name: "metrics", itemType: itemTypeTraceMetric, category: categoryTraceMetric,
		sent: e.telemetry.ExporterSentryprofileMetricsSent, dropped: e.telemetry.ExporterSentryprofileMetricsDropped}
}

// pushLogs sends the exceptions of log records (and, when configured,
// other records at or above a severity) as error events.
func (e *sentryExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	var items []signalItem
	drops := otelevent.FromLogs(ld, e.eventOpts, func(ev otelevent.Event) {
		items = append(items, signalItem{resources: map[int]int{ev.ResourceIndex: 1}, eventID: ev.EventID, payload: ev.Payload, count: 1})
	})
	rls := ld.ResourceLogs()
	retry, err := e.pushSignal(ctx, ld, e.events, drops, items, rls.Len(), func(i int) pcommon.Resource { return rls.At(i).Resource() })
	if retry == nil {
		return err
	}
	next := plog.NewLogs()
	for _, i := range retry {
		rls.At(i).CopyTo(next.ResourceLogs().AppendEmpty())
	}
	e.retries.move(ld, next)
	return consumererror.NewLogs(err, next)
}

// pushTraces sends the exceptions recorded on spans as error events.
func (e *sentryExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	var items []signalItem
	drops := otelevent.FromTraces(td, e.eventOpts, func(ev otelevent.Event) {
		items = append(items, signalItem{resources: map[int]int{ev.ResourceIndex: 1}, eventID: ev.EventID, payload: ev.Payload, count: 1})
	})
	rss := td.ResourceSpans()
	retry, err := e.pushSignal(ctx, td, e.events, drops, items, rss.Len(), func(i int) pcommon.Resource { return rss.At(i).Resource() })
	if retry == nil {
		return err
	}
	next := ptrace.NewTraces()
	for _, i := range retry {
		rss.At(i).CopyTo(next.ResourceSpans().AppendEmpty())
	}
	e.retries.move(td, next)
	return consumererror.NewTraces(err, next)
}

// pushMetrics sends metric points as trace_metric containers.
func (e *sentryExporter) pushMetrics(ctx context.Context, md pmetric.Metrics) error {
	var items []signalItem
	rms := md.ResourceMetrics()
	opts := e.metricOpts
	// The resources of one project share containers: fewer, fuller
	// envelopes, within the container limits.
	opts.Group = func(i int) any { return e.router.route(rms.At(i).Resource()) }
	drops := otelevent.FromMetrics(md, opts, func(c otelevent.Container) {
		items = append(items, signalItem{resources: c.Resources, payload: c.Payload, count: c.Items})
	})
	retry, err := e.pushSignal(ctx, md, e.metrics, drops, items, rms.Len(), func(i int) pcommon.Resource { return rms.At(i).Resource() })
	if retry == nil {
		return err
	}
	next := pmetric.NewMetrics()
	for _, i := range retry {
		rms.At(i).CopyTo(next.ResourceMetrics().AppendEmpty())
	}
	e.retries.move(md, next)
	return consumererror.NewMetrics(err, next)
}

// pushSignal delivers the items of one request, each resource to its
// project, with the profiles' rules: rate limits are waited out (the
// resource comes back as a throttled retry), failures are retried until
// retry_on_failure::max_elapsed_time is spent, permanent refusals are
// dropped and counted. It returns the resources to retry (nil when none,
// or when every resource is) and the error to hand exporterhelper.
func (e *sentryExporter) pushSignal(ctx context.Context, key any, s *signal, drops []otelevent.Drop, items []signalItem,
	resources int, resource func(int) pcommon.Resource) ([]int, error) {
	attempt := e.retries.begin(key, time.Now())
	e.recordSignalDrops(ctx, s, drops)
	out := e.deliverSignal(ctx, s, items, resource)
	if len(out.retried) == 0 {
		e.retries.end(key)
		if len(out.permErrs) > 0 {
			return nil, consumererror.NewPermanent(errors.Join(out.permErrs...))
		}
		return nil, nil
	}
	err := errors.Join(out.retryErrs...)
	failing := slices.Contains(mapValues(out.retried), true)
	if failing && attempt.fail(time.Now()) {
		e.retries.end(key)
		e.dropExhausted(ctx, s, out, err)
		if len(out.retried) == 0 {
			return nil, consumererror.NewPermanent(err)
		}
		failing = false
	}
	err = out.throttle(err, failing, attempt)
	return retriedResources(out.retried, resources), err
}

// dropExhausted drops the resources that kept failing past
// retry_on_failure::max_elapsed_time; the rate-limited ones stay due.
func (e *sentryExporter) dropExhausted(ctx context.Context, s *signal, out *signalOutcome, err error) {
	dropped := 0
	for r, f := range out.retried {
		if f {
			dropped += out.unsent[r]
			delete(out.retried, r)
		}
	}
	e.dropSignal(ctx, s, reasonRetriesExhausted, dropped)
	e.logger.Error("Sentry kept failing for longer than retry_on_failure::max_elapsed_time; dropping "+s.name,
		zap.Int(s.name, dropped), zap.Duration("max_elapsed_time", e.retries.max), zap.Error(err))
}

// retriedResources are the resources to retry, in order; nil when they
// are all of them (the request is retried whole).
func retriedResources(retried map[int]bool, resources int) []int {
	retry := make([]int, 0, len(retried))
	for r := range retried {
		retry = append(retry, r)
	}
	slices.Sort(retry)
	if len(retry) == resources {
		return nil
	}
	return retry
}

func mapValues(m map[int]bool) []bool {
	vs := make([]bool, 0, len(m))
	for _, v := range m {
		vs = append(vs, v)
	}
	return vs
}

// deliverSignal posts each item in its own envelope: Relay takes one event
// item per envelope, and a trace_metric container is already a batch of up
// to otelevent.MaxMetricsPerContainer items. Resources are visited in
// order; once a project fails, its later resources wait for the retry.
func (e *sentryExporter) deliverSignal(ctx context.Context, s *signal, items []signalItem, resource func(int) pcommon.Resource) *signalOutcome {
	out := newSignalOutcome(items)
	failed := map[*project]time.Duration{}
	for _, it := range items {
		if out.due(it) {
			// An earlier item of one of its resources waits: a resource
			// is retried whole, so this one waits too.
			out.retry(it, nil, 0, true)
			continue
		}
		p := e.router.route(resource(it.firstResource()))
		if p == nil {
			e.dropUnrouted(ctx, s, it)
			out.settled(it)
			continue
		}
		e.deliverItem(ctx, s, p, it, out, failed)
	}
	return out
}

// newSignalOutcome counts every item of every resource as unsent.
func newSignalOutcome(items []signalItem) *signalOutcome {
	out := &signalOutcome{retried: map[int]bool{}, unsent: map[int]int{}}
	for _, it := range items {
		for r, n := range it.resources {
			out.unsent[r] += n
		}
	}
	return out
}

// dropUnrouted drops an item whose resource no DSN takes.
func (e *sentryExporter) dropUnrouted(ctx context.Context, s *signal, it signalItem) {
	e.dropSignal(ctx, s, reasonNoDSN, it.count)
	e.logger.Warn("No DSN for resource; dropping its "+s.name,
		zap.String("routing_attribute", e.router.attribute), zap.Int(s.name, it.count))
}

// deliverItem posts one item to its project, unless the project's limits
// hold its category or the project failed earlier in this request (its
// later items wait for the same retry).
func (e *sentryExporter) deliverItem(ctx context.Context, s *signal, p *project, it signalItem, out *signalOutcome, failed map[*project]time.Duration) {
	now := time.Now()
	if wait := p.limits.RetryAfter(s.category, now); wait > 0 {
		out.retry(it, fmt.Errorf("%s: category %s is rate limited for %s", p.name, s.category, wait.Round(time.Second)), wait, true)
		return
	}
	if delay, ok := failed[p]; ok {
		out.retry(it, nil, delay, false)
		return
	}
	body := e.encodeSignalEnvelope(s, p, it, now)
	result := e.post(ctx, p, s.category, body)
	switch {
	case result.err == nil:
		out.settled(it)
		s.sent.Add(ctx, int64(it.count))
		e.telemetry.ExporterSentryprofileSentBytes.Add(ctx, int64(len(body)))
	case result.permanent:
		out.settled(it)
		out.permErrs = append(out.permErrs, result.err)
		e.dropSignal(ctx, s, cmpString(result.reason, reasonRejected), it.count)
		e.logger.Error("Sentry rejected "+s.name+"; dropping them", zap.String("dsn", p.name), zap.Int(s.name, it.count), zap.Error(result.err))
	default:
		out.retry(it, result.err, result.delay, result.rateLimited)
		if !result.rateLimited {
			failed[p] = result.delay
		}
	}
}

// due reports whether one of an item's resources is already due again.
func (o *signalOutcome) due(it signalItem) bool {
	for r := range it.resources {
		if _, ok := o.retried[r]; ok {
			return true
		}
	}
	return false
}

// settled counts an item accepted or dropped for good.
func (o *signalOutcome) settled(it signalItem) {
	for r, n := range it.resources {
		o.unsent[r] -= n
	}
}

// retry marks an item's resources due again, for err (nil when the reason
// is already among the errors).
func (o *signalOutcome) retry(it signalItem, err error, delay time.Duration, rateLimited bool) {
	for r := range it.resources {
		o.retried[r] = o.retried[r] || !rateLimited
	}
	o.note(err, delay, rateLimited)
}

func cmpString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// encodeSignalEnvelope writes the envelope of one item:
//
//	{"event_id":…,"sent_at":…,"dsn":…,"sdk":{…}}
//	{"type":"event","length":N}                     an error event
//	{"type":"trace_metric","length":N,"item_count":N,"content_type":…}
func (e *sentryExporter) encodeSignalEnvelope(s *signal, p *project, it signalItem, now time.Time) []byte {
	id := it.eventID
	if id == "" {
		id = newEventID()
	}
	h := envelope.Header{EventID: id, DSN: p.envelopeDSN, SentAt: now.UTC().Format(time.RFC3339),
		SDK: &envelope.SDK{Name: e.sdk.name, Version: e.sdk.version}}
	buf := make([]byte, 0, len(it.payload)+512)
	buf = append(h.AppendJSON(buf), '\n')
	if s.itemType == itemTypeTraceMetric {
		buf = fmt.Appendf(buf, `{"type":%q,"length":%d,"item_count":%d,"content_type":%q}`+"\n",
			s.itemType, len(it.payload), it.count, contentTypeTraceMetric)
	} else {
		buf = fmt.Appendf(buf, `{"type":%q,"length":%d}`+"\n", s.itemType, len(it.payload))
	}
	buf = append(buf, it.payload...)
	return append(buf, '\n')
}

// dropSignal counts items that will never reach Sentry.
func (e *sentryExporter) dropSignal(ctx context.Context, s *signal, reason string, n int) {
	if n > 0 {
		s.dropped.Add(ctx, int64(n), metric.WithAttributes(attribute.String("reason", reason)))
	}
}

// recordSignalDrops counts what the translator did not send and logs one
// line per reason.
func (e *sentryExporter) recordSignalDrops(ctx context.Context, s *signal, drops []otelevent.Drop) {
	for _, d := range drops {
		e.dropSignal(ctx, s, d.Reason, d.Count)
		e.logger.Warn("OTLP data Sentry cannot take was not sent as "+s.name,
			zap.String("reason", d.Reason), zap.Int("count", d.Count), zap.Error(d.Err))
	}
}

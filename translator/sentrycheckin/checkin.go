package sentrycheckin

import (
	"sort"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// ItemType is the envelope item type this package reads.
const ItemType = "check_in"

// EventName is the LogRecord's event name for a check-in.
const EventName = "sentry.check_in"

// Attribute keys.
const (
	AttrID            = "sentry.check_in.id"
	AttrMonitorSlug   = "sentry.monitor.slug"
	AttrStatus        = "sentry.check_in.status"
	AttrDuration      = "sentry.check_in.duration"
	AttrMonitorConfig = "sentry.monitor.config"
	AttrContexts      = "sentry.contexts"
	// AttrPrefix names the members this version does not know:
	// "sentry.payload.<member>".
	AttrPrefix = sentryattr.PayloadPrefix
)

// known are the members mapped by their own blocks, or by the resource.
var known = map[string]bool{
	"check_in_id": true, "monitor_slug": true, "status": true, "duration": true,
	"monitor_config": true, "contexts": true, "release": true, "environment": true,
}

// CheckIn is one decoded check-in.
type CheckIn struct {
	Doc      map[string]any
	ID       string // "check_in_id", 32 lower-case hex
	Slug     string // "monitor_slug"
	Status   string // "status": in_progress, ok, error
	TraceID  pcommon.TraceID
	SpanID   pcommon.SpanID
	Resource sentryresource.Resource // release, environment
}

// Logs is the router's contract for a "check_in" item: the resource its
// release and environment name, and its one record.
func Logs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	c, err := Decode(payload, opts)
	if err != nil {
		return sentrysignal.Logs{}, err
	}
	return sentrysignal.Logs{
		Facts: sentrysignal.Facts{Resource: c.Resource},
		Append: func(dst plog.LogRecordSlice) int {
			c.PutLogRecord(dst.AppendEmpty(), opts)
			return 1
		},
	}, nil
}

// Decode reads a check-in. It fails when the payload is not a JSON object,
// has no "monitor_slug" or "status", or has a "check_in_id" or trace
// context that is present but not an id.
func Decode(payload []byte, opts sentrysignal.Options) (*CheckIn, error) {
	doc, err := sentrysignal.DecodeObject(ItemType, payload, opts)
	if err != nil {
		return nil, err
	}
	c := &CheckIn{Doc: doc}
	if err := c.readMonitor(); err != nil {
		return nil, err
	}
	if c.TraceID, c.SpanID, err = sentrysignal.TraceContext(ItemType, doc); err != nil {
		return nil, err
	}
	c.Resource = sentrysignal.ResourceOfRelease(doc)
	return c, nil
}

// readMonitor reads "monitor_slug" and "status", which are required, and
// "check_in_id".
func (c *CheckIn) readMonitor() error {
	c.Slug, c.Status = sentrysignal.Str(c.Doc, "monitor_slug"), sentrysignal.Str(c.Doc, "status")
	if c.Slug == "" {
		return sentrysignal.PayloadError(ItemType, "monitor_slug", "missing", nil)
	}
	if c.Status == "" {
		return sentrysignal.PayloadError(ItemType, "status", "missing", nil)
	}
	s := sentrysignal.Str(c.Doc, "check_in_id")
	if s == "" {
		return nil
	}
	var ok bool
	if c.ID, ok = sentrysignal.EventID(s); !ok {
		return sentrysignal.PayloadError(ItemType, "check_in_id", "not a 32-hex-digit id", nil)
	}
	return nil
}

// PutLogRecord writes the check-in into lr. A check-in has no time of its
// own (Relay stamps it on arrival): the record's Timestamp stays unset for
// the receiver's ObservedTimestamp to carry.
func (c *CheckIn) PutLogRecord(lr plog.LogRecord, opts sentrysignal.Options) {
	opts = opts.WithDefaults()
	l := sentrysignal.NewLimiter(opts)
	lr.SetEventName(EventName)
	// "monitor_slug", "status" → body, severity
	lr.Body().SetStr(c.Slug + ": " + c.Status)
	lr.SetSeverityNumber(severity(c.Status))
	lr.SetSeverityText(severityText(lr.SeverityNumber()))
	// contexts.trace.trace_id, span_id
	lr.SetTraceID(c.TraceID)
	lr.SetSpanID(c.SpanID)
	attrs := lr.Attributes()
	c.putRun(attrs)
	// "monitor_config" (schedule, checkin_margin, max_runtime, timezone, …), "contexts"
	for _, m := range [...]struct{ member, key string }{{"monitor_config", AttrMonitorConfig}, {"contexts", AttrContexts}} {
		if x := c.Doc[m.member]; x != nil {
			l.PutAny(attrs, m.key, x, opts.MaxDepth)
		}
	}
	// any other member → sentry.payload.<member>
	for _, k := range c.others() {
		l.PutAny(attrs, AttrPrefix+k, c.Doc[k], opts.MaxDepth)
	}
	// what the map limits cut
	lr.SetDroppedAttributesCount(l.DroppedCount())
}

// others are the members no block maps (and a "duration" that is not a
// number), in key order.
func (c *CheckIn) others() []string {
	var others []string
	for k, v := range c.Doc {
		if v != nil && !c.mapped(k) {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	return others
}

// mapped says whether a block maps member k: a known member, but a
// "duration" that is not a number.
func (c *CheckIn) mapped(k string) bool {
	if k == "duration" {
		_, isNumber := sentrysignal.Float(c.Doc, k)
		return isNumber
	}
	return known[k]
}

// putRun writes "check_in_id", "monitor_slug", "status" and "duration"
// (seconds).
func (c *CheckIn) putRun(attrs pcommon.Map) {
	if c.ID != "" {
		attrs.PutStr(AttrID, c.ID)
	}
	attrs.PutStr(AttrMonitorSlug, c.Slug)
	attrs.PutStr(AttrStatus, c.Status)
	if d, ok := sentrysignal.Float(c.Doc, "duration"); ok {
		attrs.PutDouble(AttrDuration, d)
	}
}

// severity: a failed run is an error, a run that started or succeeded is
// information; statuses Sentry assigns itself (missed, timeout) are warnings.
// severityText names a check-in's severity as Sentry names levels, so that
// a store filtering on the text finds check-ins beside events and logs.
func severityText(n plog.SeverityNumber) string {
	switch n {
	case plog.SeverityNumberInfo:
		return "info"
	case plog.SeverityNumberError:
		return "error"
	}
	return "warning"
}

func severity(status string) plog.SeverityNumber {
	switch status {
	case "ok", "in_progress":
		return plog.SeverityNumberInfo
	case "error":
		return plog.SeverityNumberError
	}
	return plog.SeverityNumberWarn
}

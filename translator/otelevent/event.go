package otelevent

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/stacktrace"
)

// Limits of one event, with Relay's values beside them in the README.
const (
	// maxMessageChars cuts a message: Relay's max_chars of
	// logentry.formatted.
	maxMessageChars = 8192
	// MaxEventBytes is Relay's max_event_size: a larger event item is
	// refused. An event past it loses its extra, then its oldest frames,
	// before it is dropped.
	MaxEventBytes = 1 << 20
	// MaxTagChars is Relay's limit on a tag value (MaxChars::TagValue);
	// longer values are cut, as Relay would.
	MaxTagChars = 200
	// MaxExtraEntries bounds the attributes copied into extra.
	MaxExtraEntries = 256
	// MaxExtraValueChars cuts one string in extra (8 192 characters, as
	// Relay's logentry.formatted), so that a few large attributes cannot
	// push the event past MaxEventBytes; Relay trims the whole extra
	// databag to 256 KiB besides.
	MaxExtraValueChars = 8192
	// MaxFrames is the frames kept per exception: Relay's stack-trace
	// normalization keeps 250 frames of one event and cuts the middle.
	MaxFrames = 250
)

// Reasons an item is not sent.
const (
	ReasonExceedSizeLimit = "exceed_size_limit" // Relay's outcome reason for the same refusal
)

// EventOptions configures FromTraces and FromLogs. The zero value sends only
// exceptions, with no tags and no in_app marks.
type EventOptions struct {
	// InAppPrefixes mark a frame in_app when its module, package, function
	// or file name starts with one of them; when set, the other frames are
	// marked not in_app.
	InAppPrefixes []string
	// TagAttributes are the attribute keys (of the record or event, the
	// span, then the resource) copied into tags.
	TagAttributes []string
	// DefaultRelease and DefaultEnvironment stand in for a resource without
	// service.version or deployment.environment(.name).
	DefaultRelease, DefaultEnvironment string
	// LogMessageMinSeverity sends log records without an exception as
	// message events when their severity number is at least this (0: never).
	LogMessageMinSeverity plog.SeverityNumber
	// ErrorSpans sends spans with status Error and no exception event as
	// error events (their status message as the message).
	ErrorSpans bool
}

// Event is one Sentry error event, encoded.
type Event struct {
	ResourceIndex int
	EventID       string
	Platform      string
	Payload       []byte
}

// Drop is what could not be sent and why.
type Drop struct {
	Reason string
	Count  int
	Err    error
}

// FromTraces calls emit with one event per `exception` span event (and,
// with ErrorSpans, per failed span without one).
func FromTraces(td ptrace.Traces, opts EventOptions, emit func(Event)) []Drop {
	var drops []Drop
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := resourceFacts(rs.Resource(), opts)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				drops = appendDrop(drops, eventsOfSpan(spans.At(k), i, res, rs.Resource(), opts, emit))
			}
		}
	}
	return drops
}

func eventsOfSpan(span ptrace.Span, ri int, res resource, resAttrs pcommon.Resource, opts EventOptions, emit func(Event)) *Drop {
	out := eventSender{resourceIndex: ri, emit: emit}
	events := span.Events()
	for i := 0; i < events.Len(); i++ {
		if se := events.At(i); se.Name() == "exception" {
			out.send(exceptionEventOfSpan(span, i, se, res, resAttrs, opts))
		}
	}
	if out.sent == 0 && out.drop == nil && opts.ErrorSpans && span.Status().Code() == ptrace.StatusCodeError {
		out.send(errorEventOfSpan(span, res, resAttrs, opts))
	}
	return out.drop
}

// eventSender encodes and emits the events of one span, counting those
// too large to send.
type eventSender struct {
	resourceIndex int
	emit          func(Event)
	sent          int
	drop          *Drop
}

func (o *eventSender) send(ev *sentryEvent) {
	e, ok := finish(ev, o.resourceIndex)
	if !ok {
		o.drop = mergeDrop(o.drop, ReasonExceedSizeLimit, e.EventID)
		return
	}
	o.emit(e)
	o.sent++
}

// exceptionEventOfSpan is the error event of the span's i-th event, an
// `exception` event.
func exceptionEventOfSpan(span ptrace.Span, i int, se ptrace.SpanEvent, res resource, resAttrs pcommon.Resource, opts EventOptions) *sentryEvent {
	ev := newEvent(res, se.Timestamp(), "error")
	ev.EventID = stableEventID(span.TraceID().String(), span.SpanID().String(), "exception", strconv.Itoa(i),
		strconv.FormatUint(uint64(se.Timestamp()), 10))
	ev.Exception = exceptionOf(se.Attributes(), opts)
	ev.Transaction = span.Name()
	ev.Contexts = res.contexts(traceContext(span))
	ev.Tags = tagsOf(opts.TagAttributes, se.Attributes(), span.Attributes(), resAttrs.Attributes())
	ev.Extra = withUnparsed(extraOf(se.Attributes(), span.Attributes()), ev.Exception)
	return ev
}

// errorEventOfSpan is the error event of a failed span without an
// exception event: its status message, or "<name> failed".
func errorEventOfSpan(span ptrace.Span, res resource, resAttrs pcommon.Resource, opts EventOptions) *sentryEvent {
	ev := newEvent(res, span.EndTimestamp(), "error")
	ev.EventID = stableEventID(span.TraceID().String(), span.SpanID().String(), "status",
		strconv.FormatUint(uint64(span.EndTimestamp()), 10))
	msg := cmpOr(span.Status().Message(), span.Name()+" failed")
	ev.LogEntry = &logEntry{Formatted: cut(msg, maxMessageChars)}
	ev.Transaction = span.Name()
	ev.Contexts = res.contexts(traceContext(span))
	ev.Tags = tagsOf(opts.TagAttributes, span.Attributes(), resAttrs.Attributes())
	ev.Extra = extraOf(span.Attributes())
	return ev
}

// FromLogs calls emit with one event per log record that carries an
// exception (exception.type or exception.message, or our receiver's
// sentry.exception), and, with LogMessageMinSeverity, per record at or
// above it.
func FromLogs(ld plog.Logs, opts EventOptions, emit func(Event)) []Drop {
	var drops []Drop
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := resourceFacts(rl.Resource(), opts)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			records := sl.LogRecords()
			for k := 0; k < records.Len(); k++ {
				ev := eventOfRecord(records.At(k), sl.Scope().Name(), res, rl.Resource(), opts)
				if ev == nil {
					continue
				}
				ev.EventID = recordEventID(ev.EventID, records.At(k), res, j, k)
				drops = appendDrop(drops, sendEvent(ev, i, emit))
			}
		}
	}
	return drops
}

// recordEventID is the event id of the k-th record of scope j: the id our
// receiver kept, else one made of the record's place in its resource and
// what it says: the same in a retry of the resource, so Sentry drops a
// resent event as a duplicate.
func recordEventID(id string, lr plog.LogRecord, res resource, j, k int) string {
	if fromReceiver(lr) {
		return id
	}
	return stableEventID(res.identity, strconv.Itoa(j), strconv.Itoa(k),
		strconv.FormatUint(uint64(lr.Timestamp()), 10), strconv.FormatUint(uint64(lr.ObservedTimestamp()), 10),
		lr.TraceID().String(), lr.SpanID().String(), lr.Body().AsString())
}

// sendEvent encodes and emits ev; the drop when it is too large.
func sendEvent(ev *sentryEvent, resourceIndex int, emit func(Event)) *Drop {
	e, ok := finish(ev, resourceIndex)
	if !ok {
		return &Drop{Reason: ReasonExceedSizeLimit, Count: 1, Err: fmt.Errorf("event %s over %d bytes", e.EventID, MaxEventBytes)}
	}
	emit(e)
	return nil
}

func eventOfRecord(lr plog.LogRecord, scope string, res resource, resAttrs pcommon.Resource, opts EventOptions) *sentryEvent {
	attrs := lr.Attributes()
	exc := exceptionOf(attrs, opts)
	if exc == nil && !opts.sendsMessage(lr.SeverityNumber()) {
		return nil
	}
	ev := newEvent(res, recordTimestamp(lr), levelOf(lr.SeverityNumber(), lr.SeverityText()))
	ev.Exception = exc
	ev.Logger = scope
	if body := lr.Body().AsString(); body != "" && !isExceptionSummary(body, exc) {
		ev.LogEntry = &logEntry{Formatted: cut(body, maxMessageChars)}
	}
	if fromReceiver(lr) {
		// Our receiver keeps the Sentry event id here: the same event
		// keeps its id through the round trip.
		ev.EventID = str(attrs, "log.record.uid")
	}
	ev.Contexts = res.contexts(recordTraceContext(lr))
	ev.Tags = tagsOf(opts.TagAttributes, attrs, resAttrs.Attributes())
	ev.Extra = withUnparsed(extraOf(attrs), exc)
	return ev
}

// sendsMessage reports whether a record without an exception at this
// severity is sent as a message event.
func (opts EventOptions) sendsMessage(n plog.SeverityNumber) bool {
	return opts.LogMessageMinSeverity != 0 && n >= opts.LogMessageMinSeverity
}

// recordTimestamp is when the record happened, else when it was observed.
func recordTimestamp(lr plog.LogRecord) pcommon.Timestamp {
	if ts := lr.Timestamp(); ts != 0 {
		return ts
	}
	return lr.ObservedTimestamp()
}

// recordTraceContext is contexts.trace of a record; nil without a trace.
func recordTraceContext(lr plog.LogRecord) map[string]any {
	if lr.TraceID().IsEmpty() {
		return nil
	}
	tc := map[string]any{"trace_id": lr.TraceID().String()}
	if !lr.SpanID().IsEmpty() {
		tc["span_id"] = lr.SpanID().String()
	}
	return tc
}

// withUnparsed adds a stack trace the parser could not read to extra.
func withUnparsed(extra map[string]any, exc *exceptionList) map[string]any {
	if exc == nil || exc.unparsed == "" {
		return extra
	}
	if extra == nil {
		extra = map[string]any{}
	}
	extra["exception.stacktrace"] = cut(exc.unparsed, MaxExtraValueChars)
	return extra
}

// fromReceiver reports whether a record carries a Sentry event id
// (log.record.uid, 32 hex digits), as our receiver writes it.
func fromReceiver(lr plog.LogRecord) bool {
	id, ok := lr.Attributes().Get("log.record.uid")
	return ok && isHex32(id.AsString())
}

// isExceptionSummary reports whether a body only repeats the exception
// ("Type: value"), as our receiver writes it for an event without message.
func isExceptionSummary(body string, exc *exceptionList) bool {
	if exc == nil || len(exc.Values) == 0 {
		return false
	}
	last := exc.Values[len(exc.Values)-1]
	return body == last.Type+": "+last.Value || body == last.Type || body == last.Value
}

// levelOf is Sentry's level of an OTel severity (the severity number's
// ranges), else of its text; an unset severity is an error, as Sentry reads
// an event without level.
func levelOf(n plog.SeverityNumber, text string) string {
	if n >= plog.SeverityNumberTrace {
		return levelOfNumber(n)
	}
	return levelOfText(text)
}

func levelOfNumber(n plog.SeverityNumber) string {
	switch {
	case n >= plog.SeverityNumberFatal:
		return "fatal"
	case n >= plog.SeverityNumberError:
		return "error"
	case n >= plog.SeverityNumberWarn:
		return "warning"
	case n >= plog.SeverityNumberInfo:
		return "info"
	}
	return "debug"
}

func levelOfText(text string) string {
	switch t := strings.ToLower(text); t {
	case "fatal", "critical":
		return "fatal"
	case "warn", "warning":
		return "warning"
	case "info", "debug":
		return t
	}
	return "error"
}

// traceContext is contexts.trace of a span; nil for a span without ids,
// which Relay would refuse.
func traceContext(span ptrace.Span) map[string]any {
	if span.TraceID().IsEmpty() || span.SpanID().IsEmpty() {
		return nil
	}
	tc := map[string]any{
		"trace_id": span.TraceID().String(),
		"span_id":  span.SpanID().String(),
	}
	if p := span.ParentSpanID(); !p.IsEmpty() {
		tc["parent_span_id"] = p.String()
	}
	if status := traceStatus(span.Status().Code()); status != "" {
		tc["status"] = status
	}
	return tc
}

// traceStatus is Sentry's span status of an OTel one; "" when unset.
func traceStatus(code ptrace.StatusCode) string {
	switch code {
	case ptrace.StatusCodeError:
		return "internal_error"
	case ptrace.StatusCodeOk:
		return "ok"
	}
	return ""
}

// exceptionOf builds exception.values from an attribute set, or nil when it
// names no exception. A stack trace the parser does not read is kept
// whole in extra, so that nothing the producer sent is lost.
func exceptionOf(attrs pcommon.Map, opts EventOptions) *exceptionList {
	typ := str(attrs, "exception.type")
	msg := str(attrs, "exception.message")
	if typ == "" && msg == "" {
		// Also when sentry.exception is there: our receiver keeps the
		// synthetic exception of a captured message in it, which is no
		// exception.
		return nil
	}
	if exc := receiverException(attrs); exc != nil {
		return exc
	}
	text := str(attrs, "exception.stacktrace")
	chain, _, ok := stacktrace.Parse(text)
	if !ok || len(chain) == 0 {
		return &exceptionList{Values: []exceptionValue{{Type: cmpOr(typ, "Error"), Value: msg, Mechanism: mechanismOf(attrs)}}, unparsed: text}
	}
	values := exceptionValues(chain, opts)
	// The attributes name the raised exception, the chain's last value.
	last := &values[len(values)-1]
	last.nameRaised(typ, msg)
	for i := range values {
		values[i].Type = cmpOr(values[i].Type, "Error")
	}
	last.Mechanism = mechanismOf(attrs)
	return &exceptionList{Values: values}
}

// receiverException is the whole exception of a Sentry event our receiver
// keeps in sentry.exception; reading it back keeps every frame field
// exactly.
func receiverException(attrs pcommon.Map) *exceptionList {
	v, ok := attrs.Get(sentryattr.EventException)
	if !ok || v.Type() != pcommon.ValueTypeMap {
		return nil
	}
	return fromSentryException(v.Map())
}

// exceptionValues are the parsed chain's exceptions.
func exceptionValues(chain []stacktrace.Exception, opts EventOptions) []exceptionValue {
	values := make([]exceptionValue, len(chain))
	for i, c := range chain {
		values[i] = exceptionValue{Type: c.Type, Value: c.Value, Module: c.Module, Stacktrace: framesOf(c.Frames, opts)}
	}
	return values
}

// nameRaised gives the raised exception the attributes' type and message.
// The parser may split a qualified type into module and type, as Sentry's
// Java SDK does; the attribute's full name then agrees.
func (v *exceptionValue) nameRaised(typ, msg string) {
	if typ != "" && typ != v.Module+"."+v.Type {
		v.Type = typ
	}
	if msg != "" {
		v.Value = msg
	}
}

// mechanismOf marks an exception that escaped its span (exception.escaped)
// as unhandled, which Sentry shows on the issue; nil when the attribute is
// absent, since OTel says nothing then.
func mechanismOf(attrs pcommon.Map) *mechanism {
	v, ok := attrs.Get("exception.escaped")
	if !ok || v.Type() != pcommon.ValueTypeBool {
		return nil
	}
	handled := !v.Bool()
	return &mechanism{Type: "opentelemetry", Handled: &handled}
}

func framesOf(frames []stacktrace.Frame, opts EventOptions) *stackTrace {
	if len(frames) == 0 {
		return nil
	}
	if len(frames) > MaxFrames {
		// Innermost last: keep the frames nearest the raise.
		frames = frames[len(frames)-MaxFrames:]
	}
	out := make([]frame, len(frames))
	for i, f := range frames {
		out[i] = frame{Function: f.Function, Module: f.Module, Filename: f.Filename, AbsPath: f.AbsPath,
			Lineno: f.Lineno, Colno: f.Colno, Package: f.Package, InApp: inApp(f, opts.InAppPrefixes), ContextLine: f.ContextLine}
	}
	return &stackTrace{Frames: out}
}

// inApp is the parser's mark unless prefixes are configured, which decide.
func inApp(f stacktrace.Frame, prefixes []string) *bool {
	if len(prefixes) == 0 {
		return f.InApp
	}
	yes := slices.ContainsFunc(prefixes, func(p string) bool { return namedUnder(f, p) })
	return &yes
}

// namedUnder reports whether one of a frame's names starts with prefix.
func namedUnder(f stacktrace.Frame, prefix string) bool {
	for _, s := range [...]string{f.Module, f.Package, f.Function, f.Filename, f.AbsPath} {
		if s != "" && strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// fromSentryException reads the `{"values":[…]}` map our receiver writes.
func fromSentryException(m pcommon.Map) *exceptionList {
	v, ok := m.Get("values")
	if !ok || v.Type() != pcommon.ValueTypeSlice || v.Slice().Len() == 0 {
		return nil
	}
	raw, err := json.Marshal(map[string]any{"values": v.Slice().AsRaw()})
	if err != nil {
		return nil
	}
	return decodeExceptionList(raw)
}

// decodeExceptionList reads `{"values":[…]}`, keeping the JSON to send
// as it is; nil when it holds no exception.
func decodeExceptionList(raw []byte) *exceptionList {
	var exc exceptionList
	if json.Unmarshal(raw, &exc) != nil || len(exc.Values) == 0 {
		return nil
	}
	exc.raw = raw
	return &exc
}

// tagsOf copies the allow-listed attributes, the first set holding a key
// winning.
func tagsOf(keys []string, sets ...pcommon.Map) map[string]string {
	if len(keys) == 0 {
		return nil
	}
	tags := map[string]string{}
	for _, k := range keys {
		if v, ok := firstValue(k, sets); ok {
			tags[cut(k, 200)] = cut(v.AsString(), MaxTagChars)
		}
	}
	if len(tags) == 0 {
		return nil
	}
	return tags
}

// firstValue is k's value in the first set that holds it.
func firstValue(k string, sets []pcommon.Map) (pcommon.Value, bool) {
	for _, s := range sets {
		if v, ok := s.Get(k); ok {
			return v, true
		}
	}
	return pcommon.Value{}, false
}

// extraOf copies the record's attributes (those the event does not carry
// elsewhere) into extra, bounded.
func extraOf(sets ...pcommon.Map) map[string]any {
	keys, vals := extraCandidates(sets)
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	if len(keys) > MaxExtraEntries {
		keys = keys[:MaxExtraEntries]
	}
	extra := make(map[string]any, len(keys))
	for _, k := range keys {
		extra[k] = boundedRaw(vals[k])
	}
	return extra
}

// extraCandidates are the keys of the sets not mapped elsewhere, each once
// with the value of the first set holding it.
func extraCandidates(sets []pcommon.Map) ([]string, map[string]pcommon.Value) {
	var keys []string
	vals := map[string]pcommon.Value{}
	for _, s := range sets {
		for k, v := range s.All() {
			if _, seen := vals[k]; seen || mappedElsewhere(k) {
				continue
			}
			vals[k] = v
			keys = append(keys, k)
		}
	}
	return keys, vals
}

func mappedElsewhere(k string) bool {
	switch k {
	case "exception.type", "exception.message", "exception.stacktrace", sentryattr.EventException, "log.record.uid":
		return true
	}
	return false
}

// boundedRaw is a value as JSON would hold it, strings cut.
func boundedRaw(v pcommon.Value) any {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return cut(v.Str(), MaxExtraValueChars)
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return finiteOrString(v.Double())
	case pcommon.ValueTypeBool:
		return v.Bool()
	default:
		// Maps, slices and bytes as their JSON text, cut: nesting and size
		// stay bounded whatever the producer sent.
		return cut(v.AsString(), MaxExtraValueChars)
	}
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// cut shortens s to at most n characters, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// stableEventID is an event id derived from what identifies the event, so
// that the event sent again (a retried request) has the same id and Sentry
// keeps it once.
func stableEventID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func newEventID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

func isHex32(s string) bool {
	return len(s) == 32 && strings.IndexFunc(s, notLowerHexRune) < 0
}

func notLowerHexRune(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'f') }

func appendDrop(drops []Drop, d *Drop) []Drop {
	if d == nil {
		return drops
	}
	for i := range drops {
		if drops[i].Reason == d.Reason {
			drops[i].Count += d.Count
			return drops
		}
	}
	return append(drops, *d)
}

func mergeDrop(d *Drop, reason, id string) *Drop {
	if d == nil {
		return &Drop{Reason: reason, Count: 1, Err: fmt.Errorf("event %s over %d bytes", id, MaxEventBytes)}
	}
	d.Count++
	return d
}

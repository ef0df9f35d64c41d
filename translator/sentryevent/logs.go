package sentryevent

import (
	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// Attribute keys with no semantic convention.
const (
	AttrMessageTemplate   = sentryattr.MessageTemplate
	AttrMessageParameters = "sentry.message.parameters"
	// AttrMessageTruncated is true when the body, formatted here from
	// logentry.message and params, was cut at MaxFormattedChars.
	AttrMessageTruncated = "sentry.message.truncated"
	AttrTagPrefix        = sentryattr.TagPrefix
	AttrUserPrefix       = "sentry.user."
	AttrRequestPrefix    = "sentry.request."
	// AttrPrefix names every other top-level member: "sentry.<member>".
	AttrPrefix = "sentry."
)

// resourceMembers are the top-level members a resource builder maps (see
// Event.Resource); the record does not repeat them.
var resourceMembers = map[string]bool{
	"release": true, "environment": true, "dist": true, "platform": true, "server_name": true,
}

// specialMembers are mapped by their own blocks below.
var specialMembers = map[string]bool{
	"event_id": true, "timestamp": true, "tags": true, "user": true, "request": true,
}

// PutLogRecord writes the event into lr.
func (ev *Event) PutLogRecord(lr plog.LogRecord, opts sentrysignal.Options) {
	opts = opts.WithDefaults()
	doc := ev.Doc
	l := sentrysignal.NewLimiter(opts)
	attrs := lr.Attributes()
	attrs.EnsureCapacity(min(len(doc)+8, opts.MaxMapEntries))
	ev.putHeader(lr, l, sentrysignal.Str(doc, "level"))
	msg := putMessage(lr, l, opts, readMessage(doc), readExceptions(doc))
	// "tags" → sentry.tags.<key>
	putTags(attrs, l, doc["tags"], opts.MaxDepth)
	// "user", "request": personal data
	if opts.IncludeUserData {
		putUser(attrs, l, sentrysignal.Obj(doc, "user"), opts.MaxDepth)
		putRequest(attrs, l, sentrysignal.Obj(doc, "request"), opts.MaxDepth)
	}
	// every other member → sentry.<member>, frame vars only with personal data
	putOthers(attrs, l, doc, msg.member, opts)
	// what the map limits cut
	lr.SetDroppedAttributesCount(l.DroppedCount())
}

// putMessage writes the message and the exception; it returns the
// message, whose member the record does not repeat.
func putMessage(lr plog.LogRecord, l *sentrysignal.Limiter, opts sentrysignal.Options, msg message, chain exceptionChain) message {
	// "logentry" / "message" → body; else the exception's summary
	if msg.truncated && opts.Truncations != nil {
		opts.Truncations.Messages++
	}
	putBody(lr, l, msg, chain, opts.MaxDepth)
	// "exception" → exception.type, exception.message, exception.stacktrace
	if !msg.isEmpty() && chain.isSyntheticMessage() {
		chain = nil // a captured message carrying a stack trace: not an exception
	}
	putException(lr.Attributes(), l, chain)
	return msg
}

// putHeader writes the fields every record has: when, how severe, which
// trace, which event.
func (ev *Event) putHeader(lr plog.LogRecord, l *sentrysignal.Limiter, level string) {
	// "timestamp"
	lr.SetTimestamp(ev.Timestamp)
	// "level": Sentry's default for events is error
	lr.SetSeverityText(level)
	lr.SetSeverityNumber(severity(level))
	// contexts.trace.trace_id, span_id
	lr.SetTraceID(ev.TraceID)
	lr.SetSpanID(ev.SpanID)
	// "event_id" → log.record.uid
	if ev.EventID != "" {
		l.PutStr(lr.Attributes(), string(semconv.LogRecordUIDKey), ev.EventID)
	}
}

func severity(level string) plog.SeverityNumber {
	if level == "" {
		return plog.SeverityNumberError
	}
	return sentrysignal.Severity(level)
}

// putOthers keeps each member (of "logentry" and "message", the one that
// was not the body's) no block above maps under sentry.<member>,
// with a depth allowance for the interfaces whose shape Sentry defines
// (exception, threads, breadcrumbs) so that their frames and crumbs stay
// maps; free-form values inside them fall to their JSON text deeper down.
func putOthers(attrs pcommon.Map, l *sentrysignal.Limiter, doc map[string]any, messageMember string, opts sentrysignal.Options) {
	for _, k := range sortedKeys(doc) {
		if !mappedElsewhere(doc, k, messageMember) {
			putOther(attrs, l, k, doc[k], opts)
		}
	}
}

// mappedElsewhere says whether member k is mapped by a block of its own,
// by the resource, or not at all (null).
func mappedElsewhere(doc map[string]any, k, messageMember string) bool {
	if specialMembers[k] || resourceMembers[k] || k == messageMember || doc[k] == nil {
		return true
	}
	_, isText := doc[k].(string)
	return k == "level" && isText
}

// putOther writes member k as sentry.<k>: a list interface in its values
// form, an interface Sentry shapes deeper than free-form data, frames'
// vars only with personal data.
func putOther(attrs pcommon.Map, l *sentrysignal.Limiter, k string, x any, opts sentrysignal.Options) {
	if listInterfaces[k] {
		x = valuesForm(x)
	}
	depth := opts.MaxDepth
	if shapedInterfaces[k] {
		depth += interfaceDepth
	}
	if (k == "exception" || k == "threads") && !opts.IncludeUserData {
		l.PutAnyOmitting(attrs, AttrPrefix+k, x, depth, omitFrameVars)
		return
	}
	l.PutAny(attrs, AttrPrefix+k, x, depth)
}

// shapedInterfaces are the members whose shape Sentry defines deeper than
// free-form data: their frames and crumbs stay maps.
var shapedInterfaces = map[string]bool{
	"exception": true, "threads": true, "breadcrumbs": true, "contexts": true, "debug_meta": true, "_meta": true,
}

// omitFrameVars are the "vars" of stack frames: local variables are personal
// data as much as "user".
var omitFrameVars = sentrysignal.Omission{Member: "vars", In: "frames"}

// listInterfaces are the event interfaces Sentry takes either as a list or
// as {"values": list} (sentry-go sends a bare exception list); the
// attribute always has the second form, so one query finds every SDK's.
var listInterfaces = map[string]bool{"exception": true, "threads": true, "breadcrumbs": true}

// valuesForm returns a bare list as {"values": list}, anything else as it
// is.
func valuesForm(x any) any {
	if list, ok := x.([]any); ok {
		return map[string]any{"values": list}
	}
	return x
}

// interfaceDepth is the nesting of exception.values[].stacktrace.frames[]
// above a frame's own members.
const interfaceDepth = 5

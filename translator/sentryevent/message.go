package sentryevent

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// message is an event's "logentry" (or the older "message"): the text as
// shown, the template it was formatted from, and the template's params.
type message struct {
	member    string // the member read: "logentry" or "message"
	formatted string
	template  string
	params    any
	// truncated says that formatted was cut at MaxFormattedChars.
	truncated bool
}

func (m message) isEmpty() bool { return m.formatted == "" }

// readMessage reads "logentry", else "message" (a string, or an object of
// logentry's shape). The text shown is "formatted", else the template
// formatted with its params (sentry-python's logging integration sends
// only the template and the params).
func readMessage(doc map[string]any) message {
	var m message
	switch {
	case sentrysignal.Obj(doc, "logentry") != nil:
		m = logentry("logentry", sentrysignal.Obj(doc, "logentry"))
	case sentrysignal.Obj(doc, "message") != nil:
		m = logentry("message", sentrysignal.Obj(doc, "message"))
	default:
		m = message{member: "message", formatted: sentrysignal.Str(doc, "message")}
	}
	if m.formatted == "" {
		m.formatted, m.truncated = format(m.template, m.params)
	}
	if m.template == m.formatted {
		m.template = ""
	}
	return m
}

func logentry(member string, le map[string]any) message {
	return message{
		member:    member,
		formatted: sentrysignal.Str(le, "formatted"),
		template:  sentrysignal.Str(le, "message"),
		params:    le["params"],
	}
}

// putSource writes what the message was formatted from beside it.
func (m message) putSource(attrs pcommon.Map, l *sentrysignal.Limiter, depth int) {
	// the body cut at MaxFormattedChars: the template and params below
	// are whole
	if m.truncated {
		if v, ok := l.Put(attrs, AttrMessageTruncated); ok {
			v.SetBool(true)
		}
	}
	// logentry.message, when the text was formatted from it
	if m.template != "" {
		l.PutStr(attrs, AttrMessageTemplate, m.template)
	}
	// logentry.params
	if m.params != nil {
		l.PutAny(attrs, AttrMessageParameters, m.params, depth)
	}
}

// putBody writes the message as the body, its template and params beside
// it; an event without a message shows its exception's summary.
func putBody(lr plog.LogRecord, l *sentrysignal.Limiter, msg message, chain exceptionChain, depth int) {
	// logentry.formatted, else logentry.message / message → body
	if !msg.isEmpty() {
		lr.Body().SetStr(msg.formatted)
		msg.putSource(lr.Attributes(), l, depth)
		return
	}
	// exception.values[-1].type and value → body
	if len(chain) > 0 {
		lr.Body().SetStr(chain.main().summary())
	}
}

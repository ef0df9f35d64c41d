package sentrygrouping

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// FromLogRecord reads an event back from the log record the receiver
// writes for it (translator/sentryevent): the frames of sentry.exception,
// sentry.threads and sentry.stacktrace as they are when grouping runs
// (after symbolication), sentry.fingerprint, the message template and the
// body. platform is the event's, a resource attribute (sentry.platform).
func FromLogRecord(lr plog.LogRecord, platform string) Event {
	attrs := lr.Attributes()
	ev := Event{
		Platform:    platform,
		Level:       lr.SeverityText(),
		Transaction: attrStr(attrs, sentryattr.EventTransaction),
		Logger:      attrStr(attrs, sentryattr.EventLogger),
		Exceptions:  exceptionsOf(valuesOfAttr(attrs, sentryattr.EventException)),
		Threads:     threadsOf(valuesOfAttr(attrs, sentryattr.EventThreads)),
	}
	if v, ok := attrs.Get(sentryattr.EventStacktrace); ok && v.Type() == pcommon.ValueTypeMap {
		ev.Stacktrace = stacktraceOf(v.Map())
	}
	if v, ok := attrs.Get(sentryattr.EventSDK); ok && v.Type() == pcommon.ValueTypeMap {
		ev.SDKVersion = mapStr(v.Map(), "version")
	}
	if v, ok := attrs.Get(sentryattr.EventFingerprint); ok && v.Type() == pcommon.ValueTypeSlice {
		for _, e := range v.Slice().All() {
			ev.Fingerprint = append(ev.Fingerprint, e.AsString())
		}
		ev.Tags = tagsOfAttrs(attrs)
	}
	ev.Message = messageOfRecord(lr, ev.Exceptions)
	return ev
}

// messageOfRecord is the body when it is the event's message: without a
// message the receiver writes the raised exception's summary there.
func messageOfRecord(lr plog.LogRecord, exceptions []Exception) Message {
	m := Message{Template: attrStr(lr.Attributes(), sentryattr.MessageTemplate)}
	body := lr.Body().AsString()
	if m.Template == "" && len(exceptions) > 0 && body == exceptionSummary(exceptions[len(exceptions)-1]) {
		return m
	}
	m.Formatted = body
	return m
}

func exceptionSummary(e Exception) string {
	switch {
	case e.Type == "":
		return e.Value
	case e.Value == "":
		return e.Type
	}
	return e.Type + ": " + e.Value
}

func tagsOfAttrs(attrs pcommon.Map) []Tag {
	var tags []Tag
	for k, v := range attrs.All() {
		if key, ok := strings.CutPrefix(k, sentryattr.TagPrefix); ok {
			tags = append(tags, Tag{Key: key, Value: v.AsString()})
		}
	}
	return tags
}

// valuesOfAttr is the list of an interface attribute ({"values": [...]}).
func valuesOfAttr(attrs pcommon.Map, key string) pcommon.Slice {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeMap {
		return pcommon.NewSlice()
	}
	values, ok := v.Map().Get("values")
	if !ok || values.Type() != pcommon.ValueTypeSlice {
		return pcommon.NewSlice()
	}
	return values.Slice()
}

func exceptionsOf(values pcommon.Slice) []Exception {
	var out []Exception
	for _, v := range values.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		m := v.Map()
		e := Exception{Type: mapStr(m, "type"), Value: mapStr(m, "value"), Module: mapStr(m, "module")}
		if st, ok := m.Get("stacktrace"); ok && st.Type() == pcommon.ValueTypeMap {
			e.Stacktrace = stacktraceOf(st.Map())
		}
		if mech, ok := m.Get("mechanism"); ok && mech.Type() == pcommon.ValueTypeMap {
			e.Mechanism = mechanismOf(mech.Map())
		}
		out = append(out, e)
	}
	return out
}

func mechanismOf(m pcommon.Map) *Mechanism {
	mech := &Mechanism{
		Type: mapStr(m, "type"), Source: mapStr(m, "source"),
		Synthetic: mapBool(m, "synthetic"), IsExceptionGroup: mapBool(m, "is_exception_group"),
	}
	if id, ok := mapInt(m, "exception_id"); ok {
		mech.ExceptionID = &id
	}
	if id, ok := mapInt(m, "parent_id"); ok {
		mech.ParentID = &id
	}
	if meta, ok := m.Get("meta"); ok && meta.Type() == pcommon.ValueTypeMap {
		if ns, ok := meta.Map().Get("ns_error"); ok && ns.Type() == pcommon.ValueTypeMap {
			code, _ := mapInt(ns.Map(), "code")
			mech.NSError = &NSError{Domain: mapStr(ns.Map(), "domain"), Code: code}
		}
	}
	return mech
}

func threadsOf(values pcommon.Slice) []Thread {
	var out []Thread
	for _, v := range values.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		m := v.Map()
		t := Thread{Crashed: mapBool(m, "crashed"), Current: mapBool(m, "current")}
		if st, ok := m.Get("stacktrace"); ok && st.Type() == pcommon.ValueTypeMap {
			t.Stacktrace = stacktraceOf(st.Map())
		}
		out = append(out, t)
	}
	return out
}

func stacktraceOf(m pcommon.Map) *Stacktrace {
	frames, ok := m.Get("frames")
	if !ok || frames.Type() != pcommon.ValueTypeSlice || frames.Slice().Len() == 0 {
		return nil
	}
	st := &Stacktrace{Frames: make([]Frame, 0, frames.Slice().Len())}
	for _, f := range frames.Slice().All() {
		if f.Type() == pcommon.ValueTypeMap {
			st.Frames = append(st.Frames, frameOf(f.Map()))
		}
	}
	if len(st.Frames) == 0 {
		return nil
	}
	return st
}

func frameOf(m pcommon.Map) Frame {
	f := Frame{
		Function: mapStr(m, "function"), RawFunction: mapStr(m, "raw_function"),
		Module: mapStr(m, "module"), Package: mapStr(m, "package"),
		Filename: mapStr(m, "filename"), AbsPath: mapStr(m, "abs_path"),
		Platform: mapStr(m, "platform"), ContextLine: mapStr(m, "context_line"),
	}
	f.Lineno, _ = mapInt(m, "lineno")
	f.Colno, _ = mapInt(m, "colno")
	if v, ok := m.Get("in_app"); ok && v.Type() == pcommon.ValueTypeBool {
		b := v.Bool()
		f.InApp = &b
	}
	if d, ok := m.Get("data"); ok && d.Type() == pcommon.ValueTypeMap {
		if sm, ok := d.Map().Get("sourcemap"); ok && sm.Type() != pcommon.ValueTypeEmpty {
			f.SourceMapUsed = true
		}
	}
	return f
}

// attrStr is a string attribute's text; other types read as empty.
func attrStr(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

func mapStr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeEmpty:
		return ""
	}
	return v.AsString()
}

func mapBool(m pcommon.Map, key string) bool {
	v, ok := m.Get(key)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

func mapInt(m pcommon.Map, key string) (int64, bool) {
	v, ok := m.Get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		return int64(v.Double()), true
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		return n, err == nil
	}
	return 0, false
}

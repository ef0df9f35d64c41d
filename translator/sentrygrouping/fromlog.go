package sentrygrouping

import (
	"strconv"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pmap"

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
		SDKVersion:  mapStr(attrMap(attrs, sentryattr.EventSDK), "version"),
		Fingerprint: fingerprintOf(attrs),
		Level:       lr.SeverityText(),
		Transaction: attrStr(attrs, sentryattr.EventTransaction),
		Logger:      attrStr(attrs, sentryattr.EventLogger),
		Exceptions:  exceptionsOf(pmap.Slice(attrMap(attrs, sentryattr.EventException), "values")),
		Threads:     threadsOf(pmap.Slice(attrMap(attrs, sentryattr.EventThreads), "values")),
		Stacktrace:  stacktraceOf(attrMap(attrs, sentryattr.EventStacktrace)),
	}
	if len(ev.Fingerprint) > 0 {
		// only a fingerprint's {{ tags.* }} read them
		ev.Tags = tagsOfAttrs(attrs)
	}
	ev.Message = messageOfRecord(lr, ev.Exceptions)
	return ev
}

func fingerprintOf(attrs pcommon.Map) []string {
	v, ok := attrs.Get(sentryattr.EventFingerprint)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return nil
	}
	out := make([]string, 0, v.Slice().Len())
	for _, e := range v.Slice().All() {
		out = append(out, e.AsString())
	}
	return out
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

// attrMap is a map attribute, empty when absent or not a map.
func attrMap(attrs pcommon.Map, key string) pcommon.Map { return pmap.Map(attrs, key) }

// mapsOf calls read with each map of a list.
func mapsOf[T any](values pcommon.Slice, read func(pcommon.Map) T) []T {
	var out []T
	for _, v := range values.All() {
		if v.Type() == pcommon.ValueTypeMap {
			out = append(out, read(v.Map()))
		}
	}
	return out
}

func exceptionsOf(values pcommon.Slice) []Exception { return mapsOf(values, exceptionOf) }

func exceptionOf(m pcommon.Map) Exception {
	return Exception{
		Type: mapStr(m, "type"), Value: mapStr(m, "value"), Module: mapStr(m, "module"),
		Stacktrace: stacktraceOf(pmap.Map(m, "stacktrace")),
		Mechanism:  mechanismOf(m),
	}
}

// mechanismOf reads an exception's mechanism; nil when it has none.
func mechanismOf(exception pcommon.Map) *Mechanism {
	v, ok := exception.Get("mechanism")
	if !ok || v.Type() != pcommon.ValueTypeMap {
		return nil
	}
	m := v.Map()
	return &Mechanism{
		Type: mapStr(m, "type"), Source: mapStr(m, "source"),
		Synthetic: mapBool(m, "synthetic"), IsExceptionGroup: mapBool(m, "is_exception_group"),
		ExceptionID: optInt(m, "exception_id"), ParentID: optInt(m, "parent_id"),
		NSError: nsErrorOf(pmap.Map(pmap.Map(m, "meta"), "ns_error")),
	}
}

func nsErrorOf(m pcommon.Map) *NSError {
	if m.Len() == 0 {
		return nil
	}
	code, _ := mapInt(m, "code")
	return &NSError{Domain: mapStr(m, "domain"), Code: code}
}

func threadsOf(values pcommon.Slice) []Thread {
	return mapsOf(values, func(m pcommon.Map) Thread {
		return Thread{Crashed: mapBool(m, "crashed"), Current: mapBool(m, "current"), Stacktrace: stacktraceOf(pmap.Map(m, "stacktrace"))}
	})
}

// stacktraceOf reads a stack trace; nil without frames.
func stacktraceOf(m pcommon.Map) *Stacktrace {
	frames := mapsOf(pmap.Slice(m, "frames"), frameOf)
	if len(frames) == 0 {
		return nil
	}
	return &Stacktrace{Frames: frames}
}

func frameOf(m pcommon.Map) Frame {
	f := Frame{
		Function: mapStr(m, "function"), RawFunction: mapStr(m, "raw_function"),
		Module: mapStr(m, "module"), Package: mapStr(m, "package"),
		Filename: mapStr(m, "filename"), AbsPath: mapStr(m, "abs_path"),
		Platform: mapStr(m, "platform"), ContextLine: mapStr(m, "context_line"),
		InApp: optBool(m, "in_app"),
	}
	f.Lineno, _ = mapInt(m, "lineno")
	f.Colno, _ = mapInt(m, "colno")
	sm, ok := pmap.Map(m, "data").Get("sourcemap")
	f.SourceMapUsed = ok && sm.Type() != pcommon.ValueTypeEmpty
	return f
}

func optInt(m pcommon.Map, key string) *int64 {
	if n, ok := mapInt(m, key); ok {
		return &n
	}
	return nil
}

func optBool(m pcommon.Map, key string) *bool {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeBool {
		b := v.Bool()
		return &b
	}
	return nil
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

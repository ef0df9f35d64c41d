package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"github.com/sentryprofile/otelcol-sentryprofile/internal/pmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrygrouping"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/stacktrace"
)

// rerenderStacktrace writes exception.stacktrace again from the resolved
// frames of sentry.exception, in the receiver's format; a record without
// the attribute (a message with a synthetic exception) gets none.
func rerenderStacktrace(attrs pcommon.Map) {
	key := string(semconv.ExceptionStacktraceKey)
	if _, ok := attrs.Get(key); !ok {
		return
	}
	chain := chainOf(pmap.Slice(pmap.Map(attrs, sentryattr.EventException), "values"))
	attrs.PutStr(key, stacktrace.Render(chain))
}

// chainOf reads the exception chain the text is rendered from.
func chainOf(values pcommon.Slice) []stacktrace.Exception {
	chain := make([]stacktrace.Exception, 0, values.Len())
	for _, v := range values.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		e := v.Map()
		ex := stacktrace.Exception{Type: mapStr(e, "type"), Value: valueText(e)}
		for _, f := range pmap.Slice(pmap.Map(e, "stacktrace"), "frames").All() {
			if f.Type() == pcommon.ValueTypeMap {
				ex.Frames = append(ex.Frames, textFrame(f.Map()))
			}
		}
		chain = append(chain, ex)
	}
	return chain
}

// valueText is an exception's value: a string, or the text of another
// JSON value, as the receiver writes it in the summary.
func valueText(e pcommon.Map) string {
	v, ok := e.Get("value")
	if !ok || v.Type() == pcommon.ValueTypeEmpty {
		return ""
	}
	return v.AsString()
}

// textFrame is what the text shows of a frame.
func textFrame(f pcommon.Map) stacktrace.Frame {
	line, _ := mapInt(f, "lineno")
	col, _ := mapInt(f, "colno")
	return stacktrace.Frame{
		Function: mapStr(f, "function"), AbsPath: mapStr(f, "abs_path"),
		Filename: mapStr(f, "filename"), Module: mapStr(f, "module"),
		Lineno: int(line), Colno: int(col),
	}
}

// putGroupingKey sets the key Sentry groups the event by, from its frames
// as they are now (symbolicated), and the components it was made from.
func putGroupingKey(lr plog.LogRecord, platform string) {
	g := sentrygrouping.Group(sentrygrouping.FromLogRecord(lr, platform))
	attrs := lr.Attributes()
	attrs.PutStr(sentryattr.GroupingHash, g.Hash)
	comps := attrs.PutEmptySlice(sentryattr.GroupingComponents)
	comps.EnsureCapacity(len(g.Components))
	for _, c := range g.Components {
		comps.AppendEmpty().SetStr(c)
	}
}

package sentrylog

import (
	"errors"
	"sort"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// ItemType is the envelope item type of a Sentry log container.
const ItemType = "log"

// Attribute keys.
const (
	// AttrParentSpanID is where JavaScript SDKs put the active span of a
	// log, which the record's SpanId also holds.
	AttrParentSpanID = "sentry.trace.parent_span_id"
	// AttrPrefix names the log's members this version does not know:
	// "sentry.payload.<member>" (apart from the typed attributes, which
	// SDKs already name sentry.*).
	AttrPrefix = "sentry.payload."
)

// known are the members of a Sentry log mapped by their own blocks.
var known = map[string]bool{
	"timestamp": true, "trace_id": true, "span_id": true, "level": true,
	"body": true, "attributes": true, "severity_number": true,
}

// AppendLogs appends one LogRecord per log of a "log" item's container and
// returns how many it appended. A log that cannot be read is dropped and
// named in a *sentrysignal.PartialError while the others are appended; a
// payload that is not a container appends nothing and returns a
// *sentrysignal.DecodeError.
func AppendLogs(payload []byte, opts sentrysignal.Options, dst plog.LogRecordSlice) (int, error) {
	opts = opts.WithDefaults()
	items, err := sentrysignal.Container(ItemType, payload, opts)
	if err != nil {
		return 0, err
	}
	partial := sentrysignal.PartialError{Item: ItemType}
	n := 0
	// Sized only when empty: the receiver appends every log item of an
	// envelope to one slice, and sizing it exactly for each item would
	// copy it once per item; append's doubling grows it after the first.
	if dst.Len() == 0 {
		dst.EnsureCapacity(len(items))
	}
	for i, raw := range items {
		lr := plog.NewLogRecord()
		if de := putLog(lr, raw, opts, i); de != nil {
			partial.Add(de)
			continue
		}
		lr.MoveTo(dst.AppendEmpty())
		n++
	}
	return n, partial.Err()
}

// putLog maps one Sentry log.
func putLog(lr plog.LogRecord, entry any, opts sentrysignal.Options, index int) *sentrysignal.DecodeError {
	fail := func(field, reason string, err error) *sentrysignal.DecodeError {
		return sentrysignal.EntryError(ItemType, index, field, reason, err)
	}
	members, ok := entry.(map[string]any)
	if !ok {
		return fail("", "not a JSON object", nil)
	}
	l := sentrysignal.NewLimiter(opts)
	// "timestamp"
	ts, err := sentrysignal.TimestampOf(members["timestamp"])
	if err != nil {
		return fail("timestamp", "not a timestamp", err)
	}
	lr.SetTimestamp(ts)
	// "trace_id"
	if s := sentrysignal.Str(members, "trace_id"); s != "" {
		id, err := sentrysignal.TraceID(s)
		if err != nil {
			return fail("trace_id", "not a trace id", err)
		}
		lr.SetTraceID(id)
	}
	// "level" → SeverityText; "severity_number", else the level's number
	level := sentrysignal.Str(members, "level")
	lr.SetSeverityText(level)
	lr.SetSeverityNumber(sentrysignal.Severity(level))
	severityKept := false
	if n, ok := sentrysignal.Int(members, "severity_number"); ok && n >= 1 && n <= 24 {
		lr.SetSeverityNumber(plog.SeverityNumber(n))
		severityKept = true
	}
	// "body"
	l.SetAny(lr.Body(), members["body"], opts.MaxDepth)
	// "attributes": typed, each keeps its type
	if attrs := members["attributes"]; attrs != nil {
		if err := l.PutEntryAttributes(lr.Attributes(), attrs); errors.Is(err, sentrysignal.ErrNotObject) {
			return fail("attributes", "not an object", nil)
		} else if err != nil {
			return fail("attributes", "not typed attributes", err)
		}
	}
	// "span_id" (Python), else attributes."sentry.trace.parent_span_id" (JavaScript)
	if de := putSpanID(lr, sentrysignal.Str(members, "span_id"), fail); de != nil {
		return de
	}
	// any other member (and a severity_number outside 1–24) → sentry.payload.<member>
	putOthers(lr, l, members, severityKept, opts)
	// what the map limits cut
	lr.SetDroppedAttributesCount(l.DroppedCount())
	return nil
}

func putSpanID(lr plog.LogRecord, s string, fail func(string, string, error) *sentrysignal.DecodeError) *sentrysignal.DecodeError {
	field := "span_id"
	if s == "" {
		if v, ok := lr.Attributes().Get(AttrParentSpanID); ok {
			s, field = v.Str(), "attributes."+AttrParentSpanID
		}
	}
	if s == "" {
		return nil
	}
	id, err := sentrysignal.SpanID(s)
	if err != nil {
		return fail(field, "not a span id", err)
	}
	lr.SetSpanID(id)
	return nil
}

func putOthers(lr plog.LogRecord, l *sentrysignal.Limiter, members map[string]any, severityKept bool, opts sentrysignal.Options) {
	var others []string
	for k, v := range members {
		if v != nil && (!known[k] || k == "severity_number" && !severityKept) {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	for _, k := range others {
		l.PutAny(lr.Attributes(), AttrPrefix+k, members[k], opts.MaxDepth)
	}
}

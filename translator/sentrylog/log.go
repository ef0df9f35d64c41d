package sentrylog

import (
	"errors"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
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
	AttrPrefix = sentryattr.PayloadPrefix
)

// known says whether a member of a Sentry log is mapped by its own block.
func known(member string) bool {
	switch member {
	case "timestamp", "trace_id", "span_id", "level", "body", "attributes", "severity_number":
		return true
	}
	return false
}

// Logs is the router's contract for a "log" item: one LogRecord per log
// of its container, and the resource their sentry.release,
// sentry.environment, sentry.sdk.* and server.address attributes name
// (the first log that names each, as the envelope's items fill it). A log
// that cannot be read is dropped and named in a *sentrysignal.PartialError
// while the others are kept; a payload that is not a container gives
// nothing and a *sentrysignal.DecodeError. Each log is written as it is
// read (sentrysignal.ScanContainer).
func Logs(payload []byte, opts sentrysignal.Options) (sentrysignal.Logs, error) {
	b := logBatch{opts: opts.WithDefaults()}
	b.Restart()
	if err := sentrysignal.ScanContainer(ItemType, payload, b.opts, &b); err != nil {
		return sentrysignal.Logs{}, err
	}
	b.dropSpare()
	return sentrysignal.LogsOf(b.facts, b.records), b.partial.Err()
}

// logBatch is the records of one container being written.
type logBatch struct {
	opts    sentrysignal.Options
	records plog.LogRecordSlice
	facts   sentrysignal.Facts
	partial sentrysignal.PartialError
	// spare says the last record is a cleared one, left by a log that
	// could not be read, for the next log to use.
	spare bool
	// limiter is reset for each log.
	limiter sentrysignal.Limiter
	ids     sentrysignal.IDMemo
}

// Restart starts the batch afresh.
func (b *logBatch) Restart() {
	b.records = plog.NewLogRecordSlice()
	b.facts = sentrysignal.Facts{}
	b.partial = sentrysignal.PartialError{Item: ItemType}
	b.spare = false
}

// Entry writes one log into the next record.
func (b *logBatch) Entry(index int, entry any) {
	var lr plog.LogRecord
	if b.spare {
		lr = b.records.At(b.records.Len() - 1)
	} else {
		lr = b.records.AppendEmpty()
	}
	b.limiter.Reset(b.opts)
	e := logEntry{lr: lr, opts: b.opts, index: index, l: &b.limiter, ids: &b.ids}
	b.spare = false
	if de := e.put(entry); de != nil {
		b.partial.Add(de)
		plog.NewLogRecord().MoveTo(lr) // cleared, for the next log
		b.spare = true
		return
	}
	b.facts.Resource.Fill(e.resource)
}

// dropSpare removes the cleared record a last unreadable log left.
func (b *logBatch) dropSpare() {
	if !b.spare {
		return
	}
	last, i := b.records.Len()-1, 0
	b.records.RemoveIf(func(plog.LogRecord) bool {
		i++
		return i-1 == last
	})
	b.spare = false
}

// logEntry is one Sentry log being written into its record.
type logEntry struct {
	lr      plog.LogRecord
	members *sentrysignal.Entry
	l       *sentrysignal.Limiter
	ids     *sentrysignal.IDMemo
	opts    sentrysignal.Options
	index   int
	// resource is what the log's attributes name of its program.
	resource sentryresource.Resource
	// severityKept says "severity_number" was the record's.
	severityKept bool
}

func (e *logEntry) fail(field, reason string, err error) *sentrysignal.DecodeError {
	return sentrysignal.EntryError(ItemType, e.index, field, reason, err)
}

// put maps one Sentry log, member by member.
func (e *logEntry) put(entry any) *sentrysignal.DecodeError {
	members, ok := entry.(*sentrysignal.Entry)
	if !ok {
		return e.fail("", "not a JSON object", nil)
	}
	e.members = members
	for _, step := range [...]func() *sentrysignal.DecodeError{
		e.putTimestamp, e.putTraceID, e.putSeverity, e.putBody, e.putAttributes, e.putSpanID, e.putOthers,
	} {
		if de := step(); de != nil {
			return de
		}
	}
	// what the map limits cut
	e.lr.SetDroppedAttributesCount(e.l.DroppedCount())
	return nil
}

// putTimestamp: "timestamp"
func (e *logEntry) putTimestamp() *sentrysignal.DecodeError {
	ts, err := e.members.Timestamp("timestamp")
	if err != nil {
		return e.fail("timestamp", "not a timestamp", err)
	}
	e.lr.SetTimestamp(ts)
	return nil
}

// putTraceID: "trace_id"
func (e *logEntry) putTraceID() *sentrysignal.DecodeError {
	s := e.members.Str("trace_id")
	if s == "" {
		return nil
	}
	id, err := e.ids.TraceID(s)
	if err != nil {
		return e.fail("trace_id", "not a trace id", err)
	}
	e.lr.SetTraceID(id)
	return nil
}

// putSeverity: "level" → SeverityText; "severity_number", else the
// level's number
func (e *logEntry) putSeverity() *sentrysignal.DecodeError {
	level := e.members.Str("level")
	e.lr.SetSeverityText(level)
	e.lr.SetSeverityNumber(sentrysignal.Severity(level))
	if n, ok := e.members.Int("severity_number"); ok && n >= 1 && n <= 24 {
		e.lr.SetSeverityNumber(plog.SeverityNumber(n))
		e.severityKept = true
	}
	return nil
}

// putBody: "body"
func (e *logEntry) putBody() *sentrysignal.DecodeError {
	if s, ok := e.members.String("body"); ok { // as SetAny writes it, without its box
		e.lr.Body().SetStr(s)
		return nil
	}
	e.l.SetAny(e.lr.Body(), e.members.Get("body"), e.opts.MaxDepth)
	return nil
}

// putAttributes: "attributes", typed, each keeps its type
func (e *logEntry) putAttributes() *sentrysignal.DecodeError {
	attrs := e.members.Get("attributes")
	if attrs == nil {
		return nil
	}
	err := e.l.PutEntryAttributes(e.lr.Attributes(), attrs, &e.resource)
	switch {
	case errors.Is(err, sentrysignal.ErrNotObject):
		return e.fail("attributes", "not an object", nil)
	case err != nil:
		return e.fail("attributes", "not typed attributes", err)
	}
	return nil
}

// putSpanID: "span_id" (Python), else attributes."sentry.trace.parent_span_id"
// (JavaScript)
func (e *logEntry) putSpanID() *sentrysignal.DecodeError {
	s, field := e.members.Str("span_id"), "span_id"
	if s == "" {
		if v, ok := e.lr.Attributes().Get(AttrParentSpanID); ok {
			s, field = v.Str(), "attributes."+AttrParentSpanID
		}
	}
	if s == "" {
		return nil
	}
	id, err := e.ids.SpanID(s)
	if err != nil {
		return e.fail(field, "not a span id", err)
	}
	e.lr.SetSpanID(id)
	return nil
}

// mapped says whether a block maps member k: a known member, but a
// "severity_number" that did not become the record's.
func (e *logEntry) mapped(k string) bool {
	if k == "severity_number" {
		return e.severityKept
	}
	return known(k)
}

// putOthers: any other member (and a severity_number outside 1–24) →
// sentry.payload.<member>
func (e *logEntry) putOthers() *sentrysignal.DecodeError {
	for _, m := range e.members.Others(e.mapped) {
		e.l.PutAny(e.lr.Attributes(), AttrPrefix+m.Key, m.Value, e.opts.MaxDepth)
	}
	return nil
}

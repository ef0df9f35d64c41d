package sentrysignal

import (
	"encoding/hex"
	"errors"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

var errID = errors.New("not a hex id")

// TraceID reads a Sentry trace id: 32 hex digits or the dashed UUID form.
func TraceID(s string) (pcommon.TraceID, error) {
	var id pcommon.TraceID
	if len(s) == 36 {
		s = strings.ReplaceAll(s, "-", "")
	}
	if len(s) != 32 || !decodeHex(id[:], s) {
		return pcommon.TraceID{}, errID
	}
	return id, nil
}

// decodeHex writes the hex digits of s (two a byte of id) into id; false
// when one is not a hex digit. A table look-up a digit: every log and
// metric carries a trace id, which encoding/hex read at a tenth of its
// translation's look-ups.
func decodeHex(id []byte, s string) bool {
	for i := range id {
		hi, lo := hexValues[s[2*i]], hexValues[s[2*i+1]]
		if hi|lo == 0xff {
			return false
		}
		id[i] = hi<<4 | lo
	}
	return true
}

// hexValues is the value of each hex digit, 0xff for other bytes.
var hexValues = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = byte(c-'a'+10), byte(c-'a'+10)
	}
	return t
}()

// SpanID reads a Sentry span id: 16 hex digits.
func SpanID(s string) (pcommon.SpanID, error) {
	var id pcommon.SpanID
	if len(s) != 16 || !decodeHex(id[:], s) {
		return pcommon.SpanID{}, errID
	}
	return id, nil
}

// EventID normalizes an event id to Sentry's 32 lower-case hex digits;
// false when it is not one.
func EventID(s string) (string, bool) {
	id, err := TraceID(s)
	if err != nil {
		return "", false
	}
	return hex.EncodeToString(id[:]), true
}

// TraceContext reads contexts.trace.trace_id and span_id of an
// event-shaped payload; an id that is present but not one fails (naming
// item), since a record linked to the wrong trace is worse than none.
func TraceContext(item string, doc map[string]any) (pcommon.TraceID, pcommon.SpanID, error) {
	trace := Obj(Obj(doc, "contexts"), "trace")
	return TraceIDs(item, Str(trace, "trace_id"), Str(trace, "span_id"))
}

// TraceContextOf is TraceContext of an event read as a Payload.
func TraceContextOf(item string, p *Payload, obj Node) (pcommon.TraceID, pcommon.SpanID, error) {
	trace := p.Member(p.Member(obj, "contexts"), "trace")
	return TraceIDs(item, p.Str(p.Member(trace, "trace_id")), p.Str(p.Member(trace, "span_id")))
}

// TraceIDs reads the texts of contexts.trace.trace_id and span_id; empty
// is none, anything else must be an id (see TraceContext).
func TraceIDs(item, traceText, spanText string) (pcommon.TraceID, pcommon.SpanID, error) {
	traceID, err := optionalID(traceText, TraceID)
	if err != nil {
		return traceID, pcommon.SpanID{}, PayloadError(item, "contexts.trace.trace_id", "not a trace id", err)
	}
	spanID, err := optionalID(spanText, SpanID)
	if err != nil {
		return traceID, spanID, PayloadError(item, "contexts.trace.span_id", "not a span id", err)
	}
	return traceID, spanID, nil
}

// optionalID reads s by read; empty is the zero id.
func optionalID[ID pcommon.TraceID | pcommon.SpanID](s string, read func(string) (ID, error)) (ID, error) {
	if s == "" {
		var none ID
		return none, nil
	}
	return read(s)
}

// IDMemo reads trace and span ids remembering the last text of each: the
// entries of a container mostly share their trace and span, so each is
// read once rather than once an entry. The zero value is ready.
type IDMemo struct {
	trace idMemo[pcommon.TraceID]
	span  idMemo[pcommon.SpanID]
}

// TraceID is TraceID(s).
func (m *IDMemo) TraceID(s string) (pcommon.TraceID, error) { return m.trace.read(s, TraceID) }

// SpanID is SpanID(s).
func (m *IDMemo) SpanID(s string) (pcommon.SpanID, error) { return m.span.read(s, SpanID) }

// idMemo is the last id read and its text.
type idMemo[ID pcommon.TraceID | pcommon.SpanID] struct {
	text string
	id   ID
}

// read is parse(s), remembered.
func (m *idMemo[ID]) read(s string, parse func(string) (ID, error)) (ID, error) {
	if s != m.text || s == "" {
		id, err := parse(s)
		if err != nil {
			return id, err
		}
		m.text, m.id = s, id
	}
	return m.id, nil
}

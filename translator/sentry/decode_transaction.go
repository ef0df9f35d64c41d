package sentry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// DecodeTransactionEvent decodes the fields of a `transaction` item that
// link a V1 profile to its trace (see TransactionEvent). start_timestamp and
// timestamp arrive as float seconds or RFC 3339 strings and are kept as exact
// Unix nanoseconds; thread ids arrive as strings or numbers and are kept as
// text. Ids that are UUIDs (event_id, trace_id) come back as 32 lower-case
// hex digits and span ids lower-cased, the form profiles use. Unknown fields
// are ignored. Errors are *Error with ReasonInvalidJSON.
func DecodeTransactionEvent(data []byte) (*TransactionEvent, error) {
	var wire struct {
		EventID        string          `json:"event_id"`
		Transaction    string          `json:"transaction"`
		StartTimestamp json.RawMessage `json:"start_timestamp"`
		Timestamp      json.RawMessage `json:"timestamp"`
		Contexts       struct {
			Trace struct {
				TraceID string     `json:"trace_id"`
				SpanID  string     `json:"span_id"`
				Data    threadData `json:"data"`
			} `json:"trace"`
		} `json:"contexts"`
		Spans []struct {
			SpanID         string          `json:"span_id"`
			ParentSpanID   string          `json:"parent_span_id"`
			StartTimestamp json.RawMessage `json:"start_timestamp"`
			Timestamp      json.RawMessage `json:"timestamp"`
			Data           threadData      `json:"data"`
		} `json:"spans"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return nil, NewError(ReasonInvalidJSON, "transaction: "+err.Error())
	}
	ev := &TransactionEvent{
		EventID:     canonicalUUID(wire.EventID),
		Transaction: wire.Transaction,
		TraceID:     canonicalUUID(wire.Contexts.Trace.TraceID),
		SpanID:      lowerHex(wire.Contexts.Trace.SpanID),
		ThreadID:    wire.Contexts.Trace.Data.ThreadID,
	}
	var err error
	if ev.StartTimestamp, err = eventTime("start_timestamp", wire.StartTimestamp); err != nil {
		return nil, err
	}
	if ev.Timestamp, err = eventTime("timestamp", wire.Timestamp); err != nil {
		return nil, err
	}
	if len(wire.Spans) > 0 {
		ev.Spans = make([]Span, len(wire.Spans))
	}
	for i, sp := range wire.Spans {
		field := "spans[" + strconv.Itoa(i) + "]."
		ev.Spans[i] = Span{
			SpanID:       lowerHex(sp.SpanID),
			ParentSpanID: lowerHex(sp.ParentSpanID),
			ThreadID:     sp.Data.ThreadID,
		}
		if ev.Spans[i].StartTimestamp, err = eventTime(field+"start_timestamp", sp.StartTimestamp); err != nil {
			return nil, err
		}
		if ev.Spans[i].Timestamp, err = eventTime(field+"timestamp", sp.Timestamp); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// threadData reads "thread.id" (string or number) from a span's or trace
// context's "data"; other keys are ignored.
type threadData struct {
	ThreadID string
}

func (t *threadData) UnmarshalJSON(b []byte) error {
	var data map[string]json.RawMessage
	if err := json.Unmarshal(b, &data); err != nil {
		return err
	}
	raw, ok := data["thread.id"]
	if !ok || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		return json.Unmarshal(raw, &t.ThreadID)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return err
	}
	t.ThreadID = n.String()
	return nil
}

// eventTime converts float seconds or an RFC 3339 string to Unix
// nanoseconds; absent or null is 0.
func eventTime(field string, raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, NewError(ReasonInvalidJSON, "transaction: "+field+": "+err.Error())
		}
		t, err := time.Parse(time.RFC3339Nano, text)
		if err != nil {
			return 0, NewError(ReasonInvalidJSON, "transaction: "+field+": "+err.Error())
		}
		if y := t.Year(); y < 1678 || y > 2261 {
			return 0, NewError(ReasonInvalidJSON, "transaction: "+field+": "+strconv.Quote(text)+" is out of range for Unix nanoseconds")
		}
		return t.UnixNano(), nil
	}
	sec, nsec, ok := parseDecimalSeconds(raw)
	if !ok || sec > maxNanosSeconds || sec < -maxNanosSeconds {
		return 0, NewError(ReasonInvalidJSON, "transaction: "+field+": invalid or out-of-range seconds "+strconv.Quote(string(raw)))
	}
	return sec*1e9 + nsec, nil
}

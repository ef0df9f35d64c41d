package sentrygrouping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The event JSON as SDKs send it: only the members grouping reads. An
// interface is either {"values": [...]} or a bare list, a message a string
// or an object, as Sentry accepts them.

type eventJSON struct {
	Platform    string          `json:"platform"`
	SDK         sdkJSON         `json:"sdk"`
	Fingerprint []any           `json:"fingerprint"`
	Logentry    json.RawMessage `json:"logentry"`
	Message     json.RawMessage `json:"message"`
	Exception   json.RawMessage `json:"exception"`
	Threads     json.RawMessage `json:"threads"`
	Stacktrace  *stacktraceJSON `json:"stacktrace"`
	Transaction string          `json:"transaction"`
	Level       string          `json:"level"`
	Logger      string          `json:"logger"`
	Tags        json.RawMessage `json:"tags"`
}

type sdkJSON struct {
	Version string `json:"version"`
}

type logentryJSON struct {
	Message   string `json:"message"`
	Formatted string `json:"formatted"`
}

type exceptionJSON struct {
	Type       string          `json:"type"`
	Value      json.RawMessage `json:"value"`
	Module     string          `json:"module"`
	Mechanism  *mechanismJSON  `json:"mechanism"`
	Stacktrace *stacktraceJSON `json:"stacktrace"`
}

type mechanismJSON struct {
	Type             string `json:"type"`
	Source           string `json:"source"`
	Synthetic        bool   `json:"synthetic"`
	IsExceptionGroup bool   `json:"is_exception_group"`
	ExceptionID      *int64 `json:"exception_id"`
	ParentID         *int64 `json:"parent_id"`
	Meta             struct {
		NSError *struct {
			Domain string `json:"domain"`
			Code   int64  `json:"code"`
		} `json:"ns_error"`
	} `json:"meta"`
}

type threadJSON struct {
	Crashed    bool            `json:"crashed"`
	Current    bool            `json:"current"`
	Stacktrace *stacktraceJSON `json:"stacktrace"`
}

type stacktraceJSON struct {
	Frames []frameJSON `json:"frames"`
}

type frameJSON struct {
	Function    string          `json:"function"`
	RawFunction string          `json:"raw_function"`
	Module      string          `json:"module"`
	Package     string          `json:"package"`
	Filename    string          `json:"filename"`
	AbsPath     string          `json:"abs_path"`
	Platform    string          `json:"platform"`
	ContextLine string          `json:"context_line"`
	Lineno      json.Number     `json:"lineno"`
	Colno       json.Number     `json:"colno"`
	InApp       *bool           `json:"in_app"`
	Data        json.RawMessage `json:"data"`
}

// FromEventJSON reads the members of a Sentry event that grouping uses.
// It fails on JSON that is not an event object.
func FromEventJSON(data []byte) (Event, error) {
	var doc eventJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return Event{}, fmt.Errorf("sentrygrouping: reading the event: %w", err)
	}
	ev := Event{
		Platform:    doc.Platform,
		SDKVersion:  doc.SDK.Version,
		Fingerprint: fingerprintStrings(doc.Fingerprint),
		Message:     messageOf(doc.Logentry, doc.Message),
		Transaction: doc.Transaction,
		Level:       doc.Level,
		Logger:      doc.Logger,
		Tags:        tagsOf(doc.Tags),
		Stacktrace:  doc.Stacktrace.model(),
	}
	var err error
	if ev.Exceptions, err = decodeList(doc.Exception, (*exceptionJSON).model); err != nil {
		return Event{}, fmt.Errorf("sentrygrouping: reading exception: %w", err)
	}
	if ev.Threads, err = decodeList(doc.Threads, (*threadJSON).model); err != nil {
		return Event{}, fmt.Errorf("sentrygrouping: reading threads: %w", err)
	}
	return ev, nil
}

// decodeList decodes an interface's list and converts each entry.
func decodeList[J, T any](raw json.RawMessage, model func(*J) T) ([]T, error) {
	var list []J
	if err := valuesOf(raw, &list); err != nil {
		return nil, err
	}
	out := make([]T, len(list))
	for i := range list {
		out[i] = model(&list[i])
	}
	return out, nil
}

func (t *threadJSON) model() Thread {
	return Thread{Crashed: t.Crashed, Current: t.Current, Stacktrace: t.Stacktrace.model()}
}

// valuesOf decodes an interface given as {"values": [...]} or as a list.
func valuesOf(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if !isNull(raw) && raw[0] != '[' {
		var wrapped struct {
			Values json.RawMessage `json:"values"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil {
			return err
		}
		raw = bytes.TrimSpace(wrapped.Values)
	}
	if isNull(raw) {
		return nil
	}
	return json.Unmarshal(raw, dst)
}

func isNull(raw []byte) bool { return len(raw) == 0 || bytes.Equal(raw, []byte("null")) }

// messageOf reads "logentry", else "message" (a string is the formatted
// text).
func messageOf(logentry, message json.RawMessage) Message {
	for _, raw := range []json.RawMessage{logentry, message} {
		var le logentryJSON
		if json.Unmarshal(raw, &le) == nil && (le.Message != "" || le.Formatted != "") {
			return Message{Template: le.Message, Formatted: le.Formatted}
		}
	}
	var text string
	if json.Unmarshal(message, &text) == nil {
		return Message{Formatted: text}
	}
	return Message{}
}

// fingerprintStrings keeps the entries Sentry keeps: strings, and numbers
// as their text.
func fingerprintStrings(entries []any) []string {
	var out []string
	for _, e := range entries {
		switch v := e.(type) {
		case string:
			out = append(out, v)
		case float64:
			out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
		case json.Number:
			out = append(out, v.String())
		}
	}
	return out
}

// tagsOf reads "tags" as an object or as a list of [key, value] pairs.
func tagsOf(raw json.RawMessage) []Tag {
	var obj map[string]string
	if json.Unmarshal(raw, &obj) == nil {
		tags := make([]Tag, 0, len(obj))
		for k, v := range obj {
			tags = append(tags, Tag{Key: k, Value: v})
		}
		return tags
	}
	var pairs [][]string
	_ = json.Unmarshal(raw, &pairs) // tags of another shape are none
	var tags []Tag
	for _, p := range pairs {
		if len(p) == 2 {
			tags = append(tags, Tag{Key: p[0], Value: p[1]})
		}
	}
	return tags
}

func (e *exceptionJSON) model() Exception {
	return Exception{Type: e.Type, Value: valueText(e.Value), Module: e.Module, Stacktrace: e.Stacktrace.model(), Mechanism: e.Mechanism.model()}
}

// valueText is an exception's value; one that is not a string is kept as
// its JSON text.
func valueText(raw json.RawMessage) string {
	var value string
	if json.Unmarshal(raw, &value) == nil || isNull(bytes.TrimSpace(raw)) {
		return value
	}
	return string(bytes.TrimSpace(raw))
}

func (m *mechanismJSON) model() *Mechanism {
	if m == nil {
		return nil
	}
	out := &Mechanism{
		Type: m.Type, Source: m.Source, Synthetic: m.Synthetic, IsExceptionGroup: m.IsExceptionGroup,
		ExceptionID: m.ExceptionID, ParentID: m.ParentID,
	}
	if ns := m.Meta.NSError; ns != nil {
		out.NSError = &NSError{Domain: ns.Domain, Code: ns.Code}
	}
	return out
}

func (s *stacktraceJSON) model() *Stacktrace {
	if s == nil || len(s.Frames) == 0 {
		return nil
	}
	frames := make([]Frame, len(s.Frames))
	for i := range s.Frames {
		frames[i] = s.Frames[i].model()
	}
	return &Stacktrace{Frames: frames}
}

func (f *frameJSON) model() Frame {
	lineno, _ := f.Lineno.Int64()
	colno, _ := f.Colno.Int64()
	return Frame{
		Function: f.Function, RawFunction: f.RawFunction, Module: f.Module, Package: f.Package,
		Filename: f.Filename, AbsPath: f.AbsPath, Platform: f.Platform, ContextLine: f.ContextLine,
		Lineno: lineno, Colno: colno, InApp: f.InApp, SourceMapUsed: hasSourceMap(f.Data),
	}
}

// hasSourceMap reports whether a frame's "data" names the source map it
// was resolved with.
func hasSourceMap(data json.RawMessage) bool {
	if len(data) == 0 {
		return false
	}
	var d struct {
		SourceMap json.RawMessage `json:"sourcemap"`
	}
	if json.Unmarshal(data, &d) != nil {
		return false
	}
	s := bytes.TrimSpace(d.SourceMap)
	return len(s) > 0 && !bytes.Equal(s, []byte("null"))
}

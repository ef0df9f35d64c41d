package sentrygrouping

import (
	"encoding/json"
	"strconv"
)

// FromEventDoc reads an event already decoded as JSON values (objects as
// map[string]any, numbers as json.Number or float64), as the receiver
// decodes event items: the hot path builds the model from that decoding
// instead of reading the JSON again. Members of unexpected types read as
// absent.
func FromEventDoc(doc map[string]any) Event {
	return Event{
		Platform:    docStr(doc, "platform"),
		SDKVersion:  docStr(docObj(doc, "sdk"), "version"),
		Fingerprint: fingerprintStrings(docList(doc, "fingerprint")),
		Message:     docMessage(doc),
		Exceptions:  docObjects(docValues(doc["exception"]), docException),
		Threads:     docObjects(docValues(doc["threads"]), docThread),
		Stacktrace:  docStacktrace(docObj(doc, "stacktrace")),
		Transaction: docStr(doc, "transaction"),
		Level:       docStr(doc, "level"),
		Logger:      docStr(doc, "logger"),
		Tags:        docTags(doc["tags"]),
	}
}

// docMessage reads "logentry", else "message" (an object of logentry's
// shape, or the formatted text).
func docMessage(doc map[string]any) Message {
	for _, key := range [...]string{"logentry", "message"} {
		le := docObj(doc, key)
		if m := (Message{Template: docStr(le, "message"), Formatted: docStr(le, "formatted")}); m != (Message{}) {
			return m
		}
	}
	return Message{Formatted: docStr(doc, "message")}
}

func docException(m map[string]any) Exception {
	e := Exception{
		Type: docStr(m, "type"), Value: docStr(m, "value"), Module: docStr(m, "module"),
		Stacktrace: docStacktrace(docObj(m, "stacktrace")),
	}
	if mech := docObj(m, "mechanism"); mech != nil {
		e.Mechanism = &Mechanism{
			Type: docStr(mech, "type"), Source: docStr(mech, "source"),
			Synthetic: docBool(mech, "synthetic"), IsExceptionGroup: docBool(mech, "is_exception_group"),
			ExceptionID: docOptInt(mech, "exception_id"), ParentID: docOptInt(mech, "parent_id"),
			NSError: docNSError(docObj(docObj(mech, "meta"), "ns_error")),
		}
	}
	return e
}

func docNSError(m map[string]any) *NSError {
	if m == nil {
		return nil
	}
	code, _ := docInt(m, "code")
	return &NSError{Domain: docStr(m, "domain"), Code: code}
}

func docThread(m map[string]any) Thread {
	return Thread{Crashed: docBool(m, "crashed"), Current: docBool(m, "current"), Stacktrace: docStacktrace(docObj(m, "stacktrace"))}
}

// docStacktrace reads a stack trace; nil without frames.
func docStacktrace(m map[string]any) *Stacktrace {
	frames := docObjects(docList(m, "frames"), docFrame)
	if len(frames) == 0 {
		return nil
	}
	return &Stacktrace{Frames: frames}
}

func docFrame(m map[string]any) Frame {
	f := Frame{
		Function: docStr(m, "function"), RawFunction: docStr(m, "raw_function"),
		Module: docStr(m, "module"), Package: docStr(m, "package"),
		Filename: docStr(m, "filename"), AbsPath: docStr(m, "abs_path"),
		Platform: docStr(m, "platform"), ContextLine: docStr(m, "context_line"),
		SourceMapUsed: docObj(m, "data")["sourcemap"] != nil,
	}
	if b, ok := m["in_app"].(bool); ok {
		f.InApp = &b
	}
	f.Lineno, _ = docInt(m, "lineno")
	f.Colno, _ = docInt(m, "colno")
	return f
}

// docTags reads "tags" as an object or as a list of [key, value] pairs.
func docTags(x any) []Tag {
	if obj, ok := x.(map[string]any); ok {
		tags := make([]Tag, 0, len(obj))
		for k, v := range obj {
			if s, ok := v.(string); ok {
				tags = append(tags, Tag{Key: k, Value: s})
			}
		}
		return tags
	}
	list, _ := x.([]any)
	var tags []Tag
	for _, p := range list {
		if t, ok := docTagPair(p); ok {
			tags = append(tags, t)
		}
	}
	return tags
}

func docTagPair(x any) (Tag, bool) {
	p, ok := x.([]any)
	if !ok || len(p) != 2 {
		return Tag{}, false
	}
	k, kok := p[0].(string)
	v, vok := p[1].(string)
	return Tag{Key: k, Value: v}, kok && vok
}

// docObjects converts each object of a list.
func docObjects[T any](list []any, read func(map[string]any) T) []T {
	var out []T
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, read(m))
		}
	}
	return out
}

// docValues is an interface's list, given as {"values": [...]} or as a
// list.
func docValues(x any) []any {
	if m, ok := x.(map[string]any); ok {
		x = m["values"]
	}
	list, _ := x.([]any)
	return list
}

func docObj(m map[string]any, key string) map[string]any {
	obj, _ := m[key].(map[string]any)
	return obj
}

func docList(m map[string]any, key string) []any {
	list, _ := m[key].([]any)
	return list
}

func docStr(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func docBool(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}

// docInt reads an integer given as json.Number, float64 or int64.
func docInt(m map[string]any, key string) (int64, bool) {
	switch n := m[key].(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case float64:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

func docOptInt(m map[string]any, key string) *int64 {
	if n, ok := docInt(m, key); ok {
		return &n
	}
	return nil
}

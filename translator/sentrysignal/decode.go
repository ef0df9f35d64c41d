package sentrysignal

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting is encoding/json's nesting limit: a value nested deeper is
// refused, by both decoders alike, and the recursion below stays bounded.
const maxNesting = 10000

// jsonParser decodes one JSON value into the values encoding/json's
// Decoder gives with UseNumber (objects map[string]any, arrays []any,
// numbers json.Number, strings with invalid UTF-8 and lone surrogates
// replaced by U+FFFD), in one pass over the input. encoding/json reads a
// value twice (a validating scan, then the decode) and goes through its
// reflection machinery for every member; a signal item is decoded whole
// on every request, so that was half of an error event's translation.
// The differential test and fuzz target keep the two decoders' values and
// their accepting the same inputs equal.
type jsonParser struct {
	data  []byte
	pos   int
	depth int
	// strs shares the strings a payload repeats (a file name in every
	// frame, a release in every log), boxed: half of a captured node
	// error's strings are repeats.
	strs map[string]any
	// entries is the scratch space of typedAttributes; members and
	// elements are stacks of the objects and arrays being read.
	entries  []typedEntry
	order    []int32
	members  []member
	elements []any
}

// member is one member of an object being read.
type member struct {
	key   string
	value any
}

// syntaxError says where the input stopped being JSON.
func (p *jsonParser) syntaxError(what string) error {
	if p.pos >= len(p.data) {
		return fmt.Errorf("unexpected end of JSON input (%s)", what)
	}
	return fmt.Errorf("invalid character %q at offset %d (%s)", p.data[p.pos], p.pos, what)
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value reads the value at pos (after any space).
func (p *jsonParser) value() (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.syntaxError("looking for a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.strValue()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return nil, p.syntaxError("looking for a value")
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.syntaxError("in literal " + word)
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return errors.New("exceeded max depth")
	}
	return nil
}

func (p *jsonParser) object() (any, error) { return p.objectWith(nil, false) }

// objectWith reads an object whose member values read reads (p.value
// when nil); with discard it builds no map (read keeps what it needs).
func (p *jsonParser) objectWith(read func(key string) (any, error), discard bool) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	if p.at('}') {
		p.pos++
		p.depth--
		if discard {
			return nil, nil
		}
		return make(map[string]any), nil
	}
	// the members wait on p.members until the object ends, so that its
	// map is made at its size at once rather than grown
	base := len(p.members)
	defer func() {
		clear(p.members[base:]) // the stack keeps no values alive
		p.members = p.members[:base]
	}()
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.syntaxError("looking for an object key")
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.syntaxError("after an object key")
		}
		p.pos++
		var v any
		if read != nil {
			v, err = read(key)
		} else {
			v, err = p.value()
		}
		if err != nil {
			return nil, err
		}
		if !discard {
			p.members = append(p.members, member{key, v})
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.syntaxError("after an object value")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			if discard {
				return nil, nil
			}
			members := p.members[base:]
			obj := make(map[string]any, len(members))
			for _, m := range members {
				obj[m.key] = m.value // a repeated key: the last one wins, as in encoding/json
			}
			return obj, nil
		default:
			return nil, p.syntaxError("after an object value")
		}
	}
}

func (p *jsonParser) array() (any, error) { return p.arrayWith(p.value) }

// arrayWith reads an array whose elements elem reads.
func (p *jsonParser) arrayWith(elem func() (any, error)) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	if p.at(']') {
		p.pos++
		p.depth--
		return make([]any, 0), nil
	}
	// the elements wait on p.elements until the array ends (see objectWith)
	base := len(p.elements)
	defer func() {
		clear(p.elements[base:])
		p.elements = p.elements[:base]
	}()
	for {
		v, err := elem()
		if err != nil {
			return nil, err
		}
		p.elements = append(p.elements, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.syntaxError("after an array element")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return slices.Clone(p.elements[base:]), nil
		default:
			return nil, p.syntaxError("after an array element")
		}
	}
}

// at reports whether the next character after space is c.
func (p *jsonParser) at(c byte) bool {
	p.skipSpace()
	return p.pos < len(p.data) && p.data[p.pos] == c
}

// containerMember reads a member of a container's top-level object:
// "items" entries are read by entry.
func (p *jsonParser) containerMember(key string) (any, error) {
	if key == "items" && p.at('[') {
		return p.arrayWith(p.entry)
	}
	return p.value()
}

// entry reads an entry of "items": an object's "attributes" object is
// read as typed attributes.
func (p *jsonParser) entry() (any, error) {
	if p.at('{') {
		return p.objectWith(func(key string) (any, error) {
			if key == "attributes" && p.at('{') {
				return p.typedAttributes()
			}
			return p.value()
		}, false)
	}
	return p.value()
}

// typedAttributes reads an entry's "attributes" object into a
// *TypedAttributes: the same attributes, types and values PutTyped reads
// from the object as a map, a repeated key keeping its last value.
func (p *jsonParser) typedAttributes() (any, error) {
	base := len(p.entries)
	_, err := p.objectWith(func(key string) (any, error) {
		e := typedEntry{key: key}
		var err error
		if p.at('{') {
			err = p.typedValue(&e)
		} else {
			e.raw, err = p.value()
		}
		p.entries = append(p.entries, e)
		return nil, err
	}, true)
	if err != nil {
		return nil, err
	}
	// one per key, the last one sent, in key order; p.entries is the
	// parser's scratch space, the attributes get a slice of their size
	// (indices are sorted: moving the entries themselves cost a sixth of
	// a log container's translation)
	entries := p.entries[base:]
	order := p.order[:0]
	for i := range entries {
		order = append(order, int32(i))
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(entries[a].key, entries[b].key); c != 0 {
			return c
		}
		return int(a - b) // a repeated key: in the order sent
	})
	p.order = order
	n := 0
	for i := range order {
		if i+1 == len(order) || entries[order[i+1]].key != entries[order[i]].key {
			n++
		}
	}
	kept := make([]typedEntry, 0, n)
	for i := range order {
		if i+1 == len(order) || entries[order[i+1]].key != entries[order[i]].key {
			kept = append(kept, entries[order[i]])
		}
	}
	clear(entries) // the scratch keeps no values alive
	p.entries = p.entries[:base]
	return &TypedAttributes{entries: kept}, nil
}

// typedValue reads one typed value's object ({"type", "value"} or a
// legacy member) into e; its other members are read and left.
func (p *jsonParser) typedValue(e *typedEntry) error {
	e.isObject = true
	_, err := p.objectWith(func(key string) (any, error) {
		if key == "type" && p.at('"') {
			// Sentry's type names, shared rather than allocated
			s, err := p.key()
			e.typ = s
			return nil, err
		}
		if key == "value" && p.pos < len(p.data) {
			// p.at('"') above has skipped the space
			switch c := p.data[p.pos]; {
			case c == '"':
				s, err := p.str()
				e.value, e.text, e.textKind = nil, s, stringText
				return nil, err
			case c == '-' || ('0' <= c && c <= '9'):
				s, err := p.numberText()
				e.value, e.text, e.textKind = nil, s, numberText
				return nil, err
			}
		}
		v, err := p.value()
		switch key {
		case "type":
			e.typ = "" // not a string: no type
		case "value":
			e.value, e.text, e.textKind = v, "", noText
		default:
			for i, lt := range legacyTypes {
				if key == lt.member {
					if e.legacy == nil {
						e.legacy = new([len(legacyTypes)]any)
					}
					e.legacy[i] = v
				}
			}
		}
		return nil, err
	}, true)
	return err
}

// number reads a number by JSON's grammar and keeps its text.
func (p *jsonParser) number() (any, error) {
	text, err := p.numberText()
	if err != nil {
		return nil, err
	}
	return json.Number(text), nil
}

// numberText is number's text.
func (p *jsonParser) numberText() (string, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.pos < len(p.data) && '1' <= p.data[p.pos] && p.data[p.pos] <= '9':
		p.digits()
	default:
		return "", p.syntaxError("in numeric literal")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if !p.digits() {
			return "", p.syntaxError("after decimal point in numeric literal")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if !p.digits() {
			return "", p.syntaxError("in exponent of numeric literal")
		}
	}
	return string(p.data[start:p.pos]), nil
}

// digits skips one or more digits; false when there is none.
func (p *jsonParser) digits() bool {
	start := p.pos
	for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

// key reads an object key: the members every payload repeats (a frame's
// "function", "lineno", "in_app", …) are shared strings rather than an
// allocation each, a third of an error event's allocations.
func (p *jsonParser) key() (string, error) {
	// the quote, then plain ASCII up to the closing quote
	end := p.pos + 1
	for end < len(p.data) && end-p.pos <= maxKnownKey && p.data[end] != '"' && p.data[end] != '\\' && p.data[end] >= ' ' && p.data[end] < utf8.RuneSelf {
		end++
	}
	if end < len(p.data) && p.data[end] == '"' {
		// the members of every typed attribute, before the table
		switch string(p.data[p.pos+1 : end]) {
		case "type":
			p.pos = end + 1
			return "type", nil
		case "value":
			p.pos = end + 1
			return "value", nil
		}
		if k, ok := knownKeys[string(p.data[p.pos+1:end])]; ok { // no allocation: a look-up
			p.pos = end + 1
			return k, nil
		}
	}
	return p.str()
}

// Bounds of the strings shared by a parser: a payload of long or
// distinct strings costs at most maxShared look-ups more than one without.
// Payloads under minSharedPayload repeat too little to pay for the map.
const (
	maxSharedLen     = 256
	maxShared        = 4096
	minSharedPayload = 4096
)

// sharedValue is the text b as a boxed string, the same one for the same
// text (a string in a JSON value costs its bytes and its box).
func (p *jsonParser) sharedValue(b []byte) any {
	if len(b) > maxSharedLen || len(p.data) < minSharedPayload {
		return string(b)
	}
	if v, ok := p.strs[string(b)]; ok { // no allocation: a look-up
		return v
	}
	var v any = string(b)
	if len(p.strs) < maxShared {
		if p.strs == nil {
			p.strs = make(map[string]any, min(len(p.data)/256, maxShared)) // about a string in 8 repeats
		}
		p.strs[v.(string)] = v
	}
	return v
}

// shared is string(b), the same string for the same text.
func (p *jsonParser) shared(b []byte) string {
	if len(b) > maxSharedLen || len(p.data) < minSharedPayload {
		return string(b)
	}
	return p.sharedValue(b).(string)
}

// str reads a string at pos (its opening quote). Text without escapes and
// with valid UTF-8 is copied as it is (shared, see shared); anything else
// is unquoted.
func (p *jsonParser) str() (string, error) {
	if b, ok := p.plain(); ok {
		return p.shared(b), nil
	}
	return p.unquote(p.pos)
}

// strValue is str as a JSON value: the boxed string, shared too.
func (p *jsonParser) strValue() (any, error) {
	if b, ok := p.plain(); ok {
		return p.sharedValue(b), nil
	}
	s, err := p.unquote(p.pos)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// plain reads a string at pos (its opening quote) that needs no
// unquoting and returns its text; otherwise it returns false and leaves
// pos at the string's first character, for unquote.
func (p *jsonParser) plain() ([]byte, bool) {
	p.pos++ // '"'
	start := p.pos
	for i := start; i < len(p.data); {
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return p.data[start:i], true
		case c == '\\' || c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(p.data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			i += size
		}
	}
	return nil, false
}

// unquote reads the string that started at start, from pos, writing
// escapes and invalid UTF-8 as encoding/json does.
func (p *jsonParser) unquote(start int) (string, error) {
	b := make([]byte, p.pos-start, p.pos-start+16)
	copy(b, p.data[start:p.pos])
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < ' ':
			return "", p.syntaxError("in string literal")
		case c == '\\':
			var err error
			if b, err = p.escape(b); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.pos++
		default:
			// invalid bytes become U+FFFD, one per byte
			r, size := utf8.DecodeRune(p.data[p.pos:])
			b = utf8.AppendRune(b, r)
			p.pos += size
		}
	}
	return "", p.syntaxError("in string literal")
}

// escape appends the escape at pos (its backslash) to b.
func (p *jsonParser) escape(b []byte) ([]byte, error) {
	if p.pos+1 >= len(p.data) {
		p.pos = len(p.data)
		return nil, p.syntaxError("in string escape code")
	}
	c := p.data[p.pos+1]
	switch c {
	case '"', '\\', '/':
		p.pos += 2
		return append(b, c), nil
	case 'b':
		p.pos += 2
		return append(b, '\b'), nil
	case 'f':
		p.pos += 2
		return append(b, '\f'), nil
	case 'n':
		p.pos += 2
		return append(b, '\n'), nil
	case 'r':
		p.pos += 2
		return append(b, '\r'), nil
	case 't':
		p.pos += 2
		return append(b, '\t'), nil
	case 'u':
		r := hex4(p.data[p.pos:])
		if r < 0 {
			p.pos++
			return nil, p.syntaxError("in \\u hexadecimal character escape")
		}
		p.pos += 6
		if utf16.IsSurrogate(r) {
			// a pair makes one rune; a lone half is U+FFFD, and what
			// follows it is read on its own
			if dec := utf16.DecodeRune(r, hex4(p.data[p.pos:])); dec != unicode.ReplacementChar {
				p.pos += 6
				return utf8.AppendRune(b, dec), nil
			}
			r = unicode.ReplacementChar
		}
		return utf8.AppendRune(b, r), nil
	}
	p.pos++
	return nil, p.syntaxError("in string escape code")
}

// hex4 reads `\uXXXX` at the start of s as a rune; -1 when it is not one.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// knownKeys are the members of Sentry's events, frames, contexts, log
// and metric items that every payload repeats; a read-only table.
var knownKeys = func() map[string]string {
	keys := []string{
		// event
		"event_id", "timestamp", "level", "platform", "release", "environment", "dist", "server_name",
		"logger", "transaction", "message", "logentry", "formatted", "params", "exception", "threads",
		"breadcrumbs", "contexts", "tags", "extra", "user", "request", "sdk", "modules", "fingerprint",
		"debug_meta", "transaction_info", "source", "errors",
		// exception and frames
		"values", "type", "value", "module", "mechanism", "handled", "synthetic", "exception_id",
		"parent_id", "is_exception_group", "stacktrace", "frames", "function", "raw_function", "filename",
		"abs_path", "lineno", "colno", "in_app", "context_line", "pre_context", "post_context", "vars",
		"instruction_addr", "package", "symbol", "data",
		// breadcrumbs
		"category", "origin",
		// contexts
		"trace", "trace_id", "span_id", "parent_span_id", "op", "status", "os", "runtime", "device",
		"app", "browser", "culture", "cloud_resource", "name", "version", "build", "kernel_version",
		"arch", "memory_size", "free_memory", "processor_count", "cpu_description", "processor_frequency",
		"boot_time", "app_start_time", "app_memory", "locale", "timezone",
		// sdk and user
		"integrations", "packages", "id", "email", "username", "ip_address", "url", "method",
		"headers", "query_string", "cookies", "env",
		// logs, metrics, check-ins, sessions; typed attributes' types
		TypeString, TypeBoolean, TypeInteger, TypeDouble, TypeArray, "items", "body", "attributes", "severity_number", "unit", "sentry.sdk.name",
		"sentry.sdk.version", "sentry.environment", "sentry.release", "sentry.origin",
		"sentry.message.template", "sentry.timestamp.sequence", "server.address", "sentry.server.address",
		"check_in_id", "monitor_slug", "duration", "monitor_config", "schedule", "sid", "did", "init",
		"started", "attrs", "thread.id", "thread.name", "user_agent",
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = k
	}
	return m
}()

// maxKnownKey is the length of the longest known key.
const maxKnownKey = len("sentry.timestamp.sequence")

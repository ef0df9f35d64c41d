package sentrysignal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/swar"
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
	// recent are the strings shared lately, by their place (see shared).
	recent *[recentStrings]string
	// nums shares the numbers a payload repeats (the line numbers of the
	// frames a chained exception repeats), boxed as json.Number.
	nums map[string]any
	// members and elements are stacks of the objects and arrays being
	// read.
	// typed is the attributes typedAttributes is reading; entries and
	// order are the space of a container's TypedAttributes, kept for the
	// next parser.
	typed    *TypedAttributes
	entries  []typedEntry
	order    []int32
	shapes   [len(TypedAttributes{}.shapes)]shape
	members  []member
	elements []any
}

// parsers keeps the scratch space of finished parsers (their stacks and
// the map of shared strings, emptied) for the next payload: making the
// shared strings' map for every payload was a fifth of the bytes a log
// container's translation allocated. A parser holds no value of a payload
// once released.
var parsers = sync.Pool{New: func() any { return new(jsonParser) }}

// newParser is a parser of data, with the scratch space of an earlier one.
func newParser(data []byte) *jsonParser {
	p := parsers.Get().(*jsonParser)
	p.data = data
	return p
}

// release empties p and keeps its scratch space for the next parser; the
// stacks emptied themselves as they were popped. A stack grown past
// maxPooledScratch by a large payload is let go, so that a small payload
// after it costs no more than its own size.
func (p *jsonParser) release() {
	clear(p.strs)
	clear(p.nums)
	if p.recent != nil {
		clear(p.recent[:])
	}
	*p = jsonParser{
		recent:   p.recent,
		strs:     p.strs,
		nums:     p.nums,
		entries:  pooled(p.entries),
		order:    pooled(p.order),
		shapes:   pooledShapes(p.shapes),
		members:  pooled(p.members),
		elements: pooled(p.elements),
	}
	parsers.Put(p)
}

// maxPooledScratch bounds the entries of a stack a released parser keeps.
const maxPooledScratch = 4096

// pooled is s emptied, or nil when it grew past maxPooledScratch.
func pooled[T any](s []T) []T {
	if cap(s) > maxPooledScratch {
		return nil
	}
	return s[:0]
}

// pooledShapes is shapes emptied, each slice let go when it grew past
// maxPooledScratch (see pooled).
func pooledShapes(shapes [len(TypedAttributes{}.shapes)]shape) [len(TypedAttributes{}.shapes)]shape {
	for i := range shapes {
		sh := &shapes[i]
		sh.keys, sh.order, sh.members = pooled(sh.keys), pooled(sh.order), pooled(sh.members)
	}
	return shapes
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
	// SDKs write compact JSON: one comparison settles the common case
	// (every JSON space is at most ' ').
	if p.pos < len(p.data) && p.data[p.pos] > ' ' {
		return
	}
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
	case isNumberStart(c):
		return p.number()
	}
	return p.literalValue()
}

// literalValue reads true, false or null.
func (p *jsonParser) literalValue() (any, error) {
	switch p.data[p.pos] {
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	}
	return nil, p.syntaxError("looking for a value")
}

// isNumberStart says whether c starts a JSON number.
func isNumberStart(c byte) bool { return c == '-' || isDigit(c) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

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
	// the members wait on p.members until the object ends, so that its
	// map is made at its size at once rather than grown
	base := len(p.members)
	defer func() {
		clear(p.members[base:]) // the stack keeps no values alive
		p.members = p.members[:base]
	}()
	if err := p.objectMembers(read, discard); err != nil {
		return nil, err
	}
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
}

// objectMembers reads an object's members, up to and past its "}".
func (p *jsonParser) objectMembers(read func(key string) (any, error), discard bool) error {
	if p.at('}') {
		p.pos++
		return nil
	}
	for {
		if err := p.objectMember(read, discard); err != nil {
			return err
		}
		if end, err := p.next('}', "after an object value"); end || err != nil {
			return err
		}
	}
}

// objectMember reads one "key": value member.
func (p *jsonParser) objectMember(read func(key string) (any, error), discard bool) error {
	key, err := p.memberKey()
	if err != nil {
		return err
	}
	if read == nil {
		read = p.anyValue
	}
	v, err := read(key)
	if err != nil {
		return err
	}
	if !discard {
		p.members = append(p.members, member{key, v})
	}
	return nil
}

// memberKey reads a member's key and the ":" after it.
func (p *jsonParser) memberKey() (string, error) {
	if !p.at('"') {
		return "", p.syntaxError("looking for an object key")
	}
	key, err := p.key()
	if err != nil {
		return "", err
	}
	if !p.at(':') {
		return "", p.syntaxError("after an object key")
	}
	p.pos++
	return key, nil
}

// anyValue is value as a member reader.
func (p *jsonParser) anyValue(string) (any, error) { return p.value() }

// next reads what follows a value in an object or array: a "," before
// another, or the closing c (end). what names the place in an error.
func (p *jsonParser) next(c byte, what string) (end bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, p.syntaxError(what)
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case c:
		p.pos++
		return true, nil
	}
	return false, p.syntaxError(what)
}

func (p *jsonParser) array() (any, error) { return p.arrayWith(p.value, false) }

// arrayWith reads an array whose elements elem reads; with discard it
// builds no slice (elem keeps what it needs).
func (p *jsonParser) arrayWith(elem func() (any, error), discard bool) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	// the elements wait on p.elements until the array ends (see objectWith)
	base := len(p.elements)
	defer func() {
		clear(p.elements[base:])
		p.elements = p.elements[:base]
	}()
	if err := p.arrayElements(elem, discard); err != nil {
		return nil, err
	}
	p.depth--
	if discard {
		return nil, nil
	}
	out := make([]any, len(p.elements)-base)
	copy(out, p.elements[base:])
	return out, nil
}

// arrayElements reads an array's elements, up to and past its "]".
func (p *jsonParser) arrayElements(elem func() (any, error), discard bool) error {
	if p.at(']') {
		p.pos++
		return nil
	}
	for {
		v, err := elem()
		if err != nil {
			return err
		}
		if !discard {
			p.elements = append(p.elements, v)
		}
		if end, err := p.next(']', "after an array element"); end || err != nil {
			return err
		}
	}
}

// at reports whether the next character after space is c.
func (p *jsonParser) at(c byte) bool {
	p.skipSpace()
	return p.pos < len(p.data) && p.data[p.pos] == c
}

// number reads a number by JSON's grammar and keeps its text, shared as
// a string is (see sharedValue).
func (p *jsonParser) number() (any, error) {
	b, err := p.numberBytes()
	if err != nil {
		return nil, err
	}
	return p.shareBoxed(&p.nums, b, func(s string) any { return json.Number(s) }), nil
}

// numberText is number's text.
func (p *jsonParser) numberText() (string, error) {
	b, err := p.numberBytes()
	return string(b), err
}

// numberBytes reads a number and returns its text in the payload.
func (p *jsonParser) numberBytes() ([]byte, error) {
	start := p.pos
	for _, part := range [...]func() error{p.integerPart, p.fractionPart, p.exponentPart} {
		if err := part(); err != nil {
			return nil, err
		}
	}
	return p.data[start:p.pos], nil
}

// integerPart reads a number's sign and integer digits: 0, or digits that
// do not start with 0.
func (p *jsonParser) integerPart() error {
	p.skipByte('-')
	switch {
	case p.skipByte('0'):
	case p.pos < len(p.data) && '1' <= p.data[p.pos] && p.data[p.pos] <= '9':
		p.digits()
	default:
		return p.syntaxError("in numeric literal")
	}
	return nil
}

// fractionPart reads a "." and its digits, if there is one.
func (p *jsonParser) fractionPart() error {
	if p.skipByte('.') && !p.digits() {
		return p.syntaxError("after decimal point in numeric literal")
	}
	return nil
}

// exponentPart reads an "e" or "E", its sign and digits, if there is one.
func (p *jsonParser) exponentPart() error {
	if !p.skipByte('e') && !p.skipByte('E') {
		return nil
	}
	if !p.skipByte('+') {
		p.skipByte('-')
	}
	if !p.digits() {
		return p.syntaxError("in exponent of numeric literal")
	}
	return nil
}

// skipByte skips c when it is next; false when it is not.
func (p *jsonParser) skipByte(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// digits skips one or more digits; false when there is none.
func (p *jsonParser) digits() bool {
	start := p.pos
	for p.pos < len(p.data) && isDigit(p.data[p.pos]) {
		p.pos++
	}
	return p.pos > start
}

// key reads an object key: the members every payload repeats (a frame's
// "function", "lineno", "in_app", …) are shared strings rather than an
// allocation each, a third of an error event's allocations.
func (p *jsonParser) key() (string, error) {
	b, ok := p.plain()
	if !ok {
		return p.unquote(p.pos)
	}
	if k, known := knownKeys.find(b); known {
		return k, nil
	}
	return p.shared(b), nil
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
	return p.shareBoxed(&p.strs, b, boxString)
}

func boxString(s string) any { return s }

// shareBoxed is box(string(b)), the same value for the same text from the
// table *shared (made on first use), within the bounds above.
func (p *jsonParser) shareBoxed(shared *map[string]any, b []byte, box func(string) any) any {
	if len(b) > maxSharedLen || len(p.data) < minSharedPayload {
		return box(string(b))
	}
	if v, ok := (*shared)[string(b)]; ok { // no allocation: a look-up
		return v
	}
	s := string(b)
	v := box(s)
	if len(*shared) < maxShared {
		if *shared == nil {
			*shared = make(map[string]any, min(len(p.data)/256, maxShared)) // about a string in 8 repeats
		}
		(*shared)[s] = v
	}
	return v
}

// shared is string(b), the same string for the same text, from a small
// table of recent strings placed by their length and three of their bytes
// (see keyTable): a look-up is one comparison, where the map of boxed
// strings hashes the whole text (a tenth of a log container's
// translation). A string that lost its place is made anew, so the table
// costs at most one comparison a string however the payload is made.
func (p *jsonParser) shared(b []byte) string {
	if len(b) == 0 || len(b) > maxSharedLen || len(p.data) < minSharedPayload {
		return string(b)
	}
	if p.recent == nil {
		p.recent = new([recentStrings]string)
	}
	slot := &p.recent[keyHash(b)%recentStrings]
	if *slot != string(b) { // no allocation: a comparison
		*slot = string(b)
	}
	return *slot
}

// recentStrings is the size of a parser's table of recent strings.
const recentStrings = 512

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
		i = nextSpecial(p.data, i)
		if i >= len(p.data) {
			break
		}
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return p.data[start:i], true
		case c < utf8.RuneSelf: // a backslash or a control character
			return nil, false
		}
		r, size := utf8.DecodeRune(p.data[i:])
		if r == utf8.RuneError && size == 1 {
			return nil, false
		}
		i += size
	}
	return nil, false
}

// nextSpecial is the index of the first byte of data from i on that is not
// plainASCII (printable ASCII other than the quote and the backslash, most
// of every payload), or len(data): eight bytes at a time (a fifth of a log
// container's translation was this loop a byte at a time).
func nextSpecial(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		if m := swar.StringSpecials(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(data) && plainASCII[data[i]] {
		i++
	}
	return i
}

// plainASCII marks the bytes a string copies as they are: printable ASCII
// but the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

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
	if r := simpleEscapes[c]; r != 0 {
		p.pos += 2
		return append(b, r), nil
	}
	if c == 'u' {
		return p.unicodeEscape(b)
	}
	p.pos++
	return nil, p.syntaxError("in string escape code")
}

// simpleEscapes are the one-letter escapes by their letter.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unicodeEscape appends the \uXXXX escape at pos: a surrogate pair makes
// one rune; a lone half is U+FFFD, and what follows it is read on its own.
func (p *jsonParser) unicodeEscape(b []byte) ([]byte, error) {
	r := hex4(p.data[p.pos:])
	if r < 0 {
		p.pos++
		return nil, p.syntaxError("in \\u hexadecimal character escape")
	}
	p.pos += 6
	if !utf16.IsSurrogate(r) {
		return utf8.AppendRune(b, r), nil
	}
	if dec := utf16.DecodeRune(r, hex4(p.data[p.pos:])); dec != unicode.ReplacementChar {
		p.pos += 6
		return utf8.AppendRune(b, dec), nil
	}
	return utf8.AppendRune(b, unicode.ReplacementChar), nil
}

// hex4 reads `\uXXXX` at the start of s as a rune; -1 when it is not one.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		d := hexDigit(c)
		if d < 0 {
			return -1
		}
		r = r<<4 | d
	}
	return r
}

// hexDigit is the value of a hex digit; -1 when c is not one.
func hexDigit(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// knownKeys are the members of Sentry's events, frames, contexts, log
// and metric items that every payload repeats; a read-only table.
var knownKeys = newKeyTable(knownKeyList())

// knownKeyList lists knownKeys.
func knownKeyList() []string {
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
		TypeString, TypeBoolean, TypeInteger, TypeDouble, TypeArray, "items", "body", "attributes", "severity_number", "unit", sentryattr.SDKName,
		sentryattr.SDKVersion, sentryattr.Environment, sentryattr.Release, sentryattr.Origin,
		sentryattr.MessageTemplate, sentryattr.TimestampSequence, "server.address", "sentry.server.address",
		"check_in_id", "monitor_slug", "duration", "monitor_config", "schedule", "sid", "did", "init",
		"started", "attrs", "thread.id", "thread.name", "user_agent",
	}
	return keys
}

// keyTable finds a key's shared string by its text, without allocating:
// an open-addressing table hashed on the length and three bytes of the
// key, which a payload's every key is looked up in (a Go map's hash of the
// whole key cost a tenth of a log container's translation).
type keyTable struct {
	slots [1024]string
}

func newKeyTable(keys []string) *keyTable {
	t := &keyTable{}
	for _, k := range keys {
		i := keyHash(k)
		for t.slots[i] != "" && t.slots[i] != k {
			i = (i + 1) % len(t.slots)
		}
		t.slots[i] = k
	}
	return t
}

// find returns the known key whose text is b.
func (t *keyTable) find(b []byte) (string, bool) {
	if len(b) == 0 || len(b) > maxKnownKey {
		return "", false
	}
	for i := keyHash(b); t.slots[i] != ""; i = (i + 1) % len(t.slots) {
		if t.slots[i] == string(b) { // no allocation: a comparison
			return t.slots[i], true
		}
	}
	return "", false
}

// keyHash places a key of one byte or more in a keyTable.
func keyHash[T string | []byte](k T) int {
	n := len(k)
	h := uint(n)*131 + uint(k[0])*31 + uint(k[n-1])*7 + uint(k[n/2])
	return int(h % 1024)
}

// maxKnownKey is the length of the longest known key.
const maxKnownKey = len(sentryattr.TimestampSequence)

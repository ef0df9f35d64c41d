package sentry

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// maxDepth bounds the nesting of arrays and objects. Sentry payloads nest a
// handful of levels; the bound keeps hostile input (10^5 nested arrays) from
// growing the goroutine stack through skipValue's recursion.
const maxDepth = 512

// syntaxError is a decode failure: what was wrong, the JSON path of the value
// (built while the error travels up) and the byte offset in the payload.
type syntaxError struct {
	path   string
	msg    string
	offset int
}

func (e *syntaxError) Error() string {
	if e.path == "" {
		return e.msg + " at byte offset " + strconv.Itoa(e.offset)
	}
	return e.path + ": " + e.msg + " at byte offset " + strconv.Itoa(e.offset)
}

// inField prefixes the path of a syntaxError with an object key.
func inField(err error, key string) error {
	var se *syntaxError
	if errors.As(err, &se) {
		switch {
		case se.path == "":
			se.path = key
		case se.path[0] == '[':
			se.path = key + se.path
		default:
			se.path = key + "." + se.path
		}
	}
	return err
}

// inElement prefixes the path of a syntaxError with an array index.
func inElement(err error, i int) error {
	var se *syntaxError
	if errors.As(err, &se) {
		idx := "[" + strconv.Itoa(i) + "]"
		switch {
		case se.path == "":
			se.path = idx
		case se.path[0] == '[':
			se.path = idx + se.path
		default:
			se.path = idx + "." + se.path
		}
	}
	return err
}

// scanner is a single-pass reader over one JSON document, specialised for the
// Sentry profile schema: the decoder drives it key by key and asks for the
// type it expects, so no intermediate tree is ever built.
type scanner struct {
	data  []byte
	pos   int
	depth int

	// interned maps string contents to one shared copy: thread ids repeat on
	// every sample and frame paths repeat across frames, so each distinct
	// string is allocated once per payload.
	interned      map[string]string
	internedBytes int // the bytes of the strings this scanner added to interned
	// recent short-circuits the map for the few thread ids a payload
	// alternates between.
	recent [16]string
	next   int // the slot the next interned string goes to
	hit    int // the slot of the last match: samples cycle through their threads in order
	// lastTime is the text of the last sample timestamp read (a slice of
	// data), lastNanos its value (compactTime).
	lastTime  []byte
	lastNanos int64

	// scratch holds unescaped strings until they are interned.
	scratch []byte
}

// newScanner returns a scanner over data that interns into interned; nil
// makes a new table.
func newScanner(data []byte, interned map[string]string) scanner {
	if interned == nil {
		// Distinct strings grow with the frames, roughly one per kilobyte
		// of payload; sizing the table up front saves its rehashing.
		interned = make(map[string]string, min(64+len(data)/1024, 1<<16))
	}
	return scanner{data: data, interned: interned}
}

func (s *scanner) errorf(msg string) error {
	return &syntaxError{msg: msg, offset: s.pos}
}

func (s *scanner) errorAt(off int, msg string) error {
	return &syntaxError{msg: msg, offset: off}
}

// peek skips whitespace and returns the next byte, or 0 at the end of input.
func (s *scanner) peek() byte {
	data := s.data
	i := s.pos
	for i < len(data) {
		// Most bytes are above ' ', which ends the loop on the first test.
		if c := data[i]; c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
			s.pos = i
			return c
		}
		i++
	}
	s.pos = i
	return 0
}

func (s *scanner) unexpected(want string) error {
	c := s.peek()
	if c == 0 {
		return s.errorf("unexpected end of input, expected " + want)
	}
	return s.errorf("expected " + want + ", found " + describe(c))
}

// describe names the JSON value starting with c for error messages.
func describe(c byte) string {
	switch {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	default:
		return strconv.QuoteRune(rune(c))
	}
}

// null consumes a JSON null if one is next.
func (s *scanner) null() (bool, error) {
	if s.peek() != 'n' {
		return false, nil
	}
	if !bytes.HasPrefix(s.data[s.pos:], []byte("null")) {
		return false, s.errorf("invalid literal")
	}
	s.pos += 4
	return true, nil
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return s.errorf("nesting deeper than " + strconv.Itoa(maxDepth) + " levels")
	}
	return nil
}

// beginObject consumes '{'. Callers iterate with objectNext.
func (s *scanner) beginObject() error {
	if s.peek() != '{' {
		return s.unexpected("object")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	return nil
}

// objectNext advances to the next member of the object begun with
// beginObject and returns its key, positioned at the value. n counts the
// members seen so far. It returns ok=false after consuming the closing '}'.
// The key aliases the input or the scratch buffer and is valid until the next
// string is read.
func (s *scanner) objectNext(n *int) (key []byte, ok bool, err error) {
	c := s.peek()
	if *n > 0 {
		if c == '}' {
			s.pos++
			s.depth--
			return nil, false, nil
		}
		if c != ',' {
			return nil, false, s.unexpected("',' or '}'")
		}
		s.pos++
		c = s.peek()
	} else if c == '}' {
		s.pos++
		s.depth--
		return nil, false, nil
	}
	if c != '"' {
		return nil, false, s.unexpected("object key")
	}
	*n++
	key, err = s.readString()
	if err != nil {
		return nil, false, err
	}
	if len(key) > 0 && cap(s.scratch) > 0 && &key[0] == &s.scratch[:1][0] {
		// An escaped key lives in scratch, which the value may overwrite;
		// callers still need the key to label errors and thread ids.
		key = bytes.Clone(key)
	}
	if s.peek() != ':' {
		return nil, false, s.unexpected("':'")
	}
	s.pos++
	return key, true, nil
}

// beginArray consumes '['. Callers iterate with arrayNext.
func (s *scanner) beginArray() error {
	if s.peek() != '[' {
		return s.unexpected("array")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	return nil
}

// arrayNext advances to the next element of the array begun with beginArray;
// it returns false after consuming the closing ']'.
func (s *scanner) arrayNext(n *int) (bool, error) {
	c := s.peek()
	if c == ']' {
		s.pos++
		s.depth--
		return false, nil
	}
	if *n > 0 {
		if c != ',' {
			return false, s.unexpected("',' or ']'")
		}
		s.pos++
		if s.peek() == ']' {
			return false, s.errorf("trailing comma")
		}
	}
	*n++
	return true, nil
}

// needsCare marks the bytes that end the fast path of readString: the
// closing quote, escapes, control characters and non-ASCII bytes (which need
// UTF-8 validation).
var needsCare = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// readString reads the string at s.pos (which must be '"') and returns its
// decoded bytes: a slice of the input when the string has no escapes and is
// valid UTF-8, else a slice of s.scratch.
func (s *scanner) readString() ([]byte, error) {
	data := s.data
	start := s.pos + 1
	i := start
	for i < len(data) && !needsCare[data[i]] {
		i++
	}
	if i < len(data) && data[i] == '"' {
		s.pos = i + 1
		return data[start:i], nil
	}
	return s.readStringSlow(start, i)
}

// readStringSlow finishes a string whose fast path stopped at i.
func (s *scanner) readStringSlow(start, i int) ([]byte, error) {
	data := s.data
	plain := true // no escapes and no invalid UTF-8 so far
	for {
		if i >= len(data) {
			s.pos = len(data)
			return nil, s.errorAt(start-1, "unterminated string")
		}
		c := data[i]
		switch {
		case c == '"':
			if plain {
				s.pos = i + 1
				return data[start:i], nil
			}
			s.pos = start
			return s.unescape()
		case c == '\\':
			plain = false
			i += 2
		case c < 0x20:
			s.pos = i
			return nil, s.errorf("control character in string")
		case c < 0x80:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			i += size
		}
	}
}

// unescape decodes the string body starting at s.pos (just after the opening
// quote) into s.scratch, replacing invalid UTF-8 with U+FFFD byte by byte as
// encoding/json does.
func (s *scanner) unescape() ([]byte, error) {
	data := s.data
	out := s.scratch[:0]
	i := s.pos
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			s.scratch = out
			return out, nil
		case c == '\\':
			if i+1 >= len(data) {
				s.pos = i
				return nil, s.errorf("unterminated string")
			}
			switch data[i+1] {
			case '"', '\\', '/':
				out = append(out, data[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(data[i+2:])
				if !ok {
					s.pos = i
					return nil, s.errorf("invalid \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by a low one is one rune;
					// anything else is replaced, as encoding/json does.
					if i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
						if r2, ok := hex4(data[i+2:]); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								out = utf8.AppendRune(out, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				s.pos = i
				return nil, s.errorf("invalid escape")
			}
			i += 2
		case c < 0x20:
			s.pos = i
			return nil, s.errorf("control character in string")
		case c < 0x80:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, data[i:i+size]...)
			}
			i += size
		}
	}
	s.pos = len(data)
	return nil, s.errorf("unterminated string")
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// intern returns the shared copy of b's contents.
func (s *scanner) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	v, ok := s.interned[string(b)]
	if !ok {
		v = string(b)
		s.interned[v] = v
		s.internedBytes += len(v)
	}
	return v
}

// internRecent interns b and remembers it among the recent strings that
// matchRecent and findRecent compare first. Only the values that repeat
// sample after sample (thread ids, queue addresses, states) go there: frame
// strings would only push them out.
func (s *scanner) internRecent(b []byte) string {
	v := s.intern(b)
	if v != "" && isPlainASCII(v) {
		s.recent[s.next] = v
		s.next = (s.next + 1) % len(s.recent)
	}
	return v
}

// matchRecent consumes the string at s.pos when its raw text is one of the
// recently interned plain strings: thread ids and queue addresses repeat
// sample after sample, and comparing a few bytes beats scanning them.
func (s *scanner) matchRecent() (string, bool) {
	rest := s.data[s.pos+1:]
	for k := range len(s.recent) {
		slot := (s.hit + 1 + k) % len(s.recent)
		r := s.recent[slot]
		if r != "" && len(rest) > len(r) && rest[len(r)] == '"' && string(rest[:len(r)]) == r {
			s.pos += len(r) + 2
			s.hit = slot
			return r, true
		}
	}
	return "", false
}

// findRecent returns the recently interned string equal to raw. The scan
// starts after the last match, where the next thread of a cycle usually is.
func (s *scanner) findRecent(raw []byte) (string, bool) {
	for k := range len(s.recent) {
		slot := (s.hit + 1 + k) % len(s.recent)
		if r := s.recent[slot]; len(r) == len(raw) && r == string(raw) {
			s.hit = slot
			return r, true
		}
	}
	return "", false
}

// isPlainASCII reports whether s would be written in JSON as its own bytes:
// only such strings can be matched against raw input by matchRecent.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if needsCare[s[i]] {
			return false
		}
	}
	return true
}

// stringValue reads a string; null reads as "".
func (s *scanner) stringValue() (string, error) {
	switch s.peek() {
	case '"':
		b, err := s.readString()
		if err != nil {
			return "", err
		}
		return s.intern(b), nil
	case 'n':
		_, err := s.null()
		return "", err
	}
	return "", s.unexpected("string")
}

// recentStringValue is stringValue for the values samples repeat: it tries
// the recent strings first.
func (s *scanner) recentStringValue() (string, error) {
	if s.peek() != '"' {
		return s.stringValue()
	}
	if v, ok := s.matchRecent(); ok {
		return v, nil
	}
	b, err := s.readString()
	if err != nil {
		return "", err
	}
	return s.internRecent(b), nil
}

// idValue reads an identifier sent as a string or as a number (thread ids,
// active_thread_id). A number is kept as its decimal text; it must be a
// non-negative integer, as Relay reads these as u64.
func (s *scanner) idValue() (string, error) {
	c := s.peek()
	switch {
	case c == '"' || c == 'n':
		return s.recentStringValue()
	case c >= '0' && c <= '9':
		start := s.pos
		integer, err := s.scanNumber()
		if err != nil {
			return "", err
		}
		if !integer {
			return "", s.errorAt(start, "expected an integer id")
		}
		return s.internRecent(s.data[start:s.pos]), nil
	case c == '-':
		return "", s.errorf("negative id")
	}
	return "", s.unexpected("string or number")
}

// scanNumber consumes a number with JSON's grammar and reports whether it was
// written as an integer (no fraction, no exponent).
func (s *scanner) scanNumber() (integer bool, err error) {
	data := s.data
	i := s.pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digitsEnd(data, i)
	default:
		s.pos = i
		return false, s.errorf("invalid number")
	}
	fraction, i, ok := numberFraction(data, i)
	if ok {
		var exponent bool
		exponent, i, ok = numberExponent(data, i)
		integer = !fraction && !exponent
	}
	s.pos = i
	if !ok {
		return false, s.errorf("invalid number")
	}
	return integer, nil
}

// digitsEnd is the end of the run of digits at data[i:].
func digitsEnd(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// numberFraction skips a number's ".digits" at data[i:], if there; ok is
// false for a point without digits.
func numberFraction(data []byte, i int) (present bool, end int, ok bool) {
	if i >= len(data) || data[i] != '.' {
		return false, i, true
	}
	end = digitsEnd(data, i+1)
	return true, end, end > i+1
}

// numberExponent skips a number's "e±digits" at data[i:], if there; ok is
// false for an exponent without digits.
func numberExponent(data []byte, i int) (present bool, end int, ok bool) {
	if i >= len(data) || (data[i] != 'e' && data[i] != 'E') {
		return false, i, true
	}
	i++
	if i < len(data) && (data[i] == '+' || data[i] == '-') {
		i++
	}
	end = digitsEnd(data, i)
	return true, end, end > i
}

// int64Value reads an integer (stack and frame indices). Negative values are
// returned as they are for Validate to name; values beyond int64 are errors.
func (s *scanner) int64Value() (int64, error) {
	if s.peek() == 0 {
		return 0, s.unexpected("integer")
	}
	data := s.data
	i := s.pos
	neg := false
	if data[i] == '-' {
		neg = true
		i++
	}
	if i >= len(data) || data[i] < '0' || data[i] > '9' {
		return 0, s.unexpected("integer")
	}
	start := i
	var u uint64
	if data[i] == '0' {
		i++
	} else {
		for i < len(data) {
			c := data[i] - '0'
			if c > 9 {
				break
			}
			if u > (1<<63)/10 {
				s.pos = start
				return 0, s.errorf("integer overflows int64")
			}
			u = u*10 + uint64(c)
			i++
		}
	}
	if i < len(data) {
		if c := data[i]; c == '.' || c == 'e' || c == 'E' {
			s.pos = start
			return 0, s.errorf("expected an integer")
		} else if c >= '0' && c <= '9' {
			s.pos = start
			return 0, s.errorf("invalid number")
		}
	}
	if u > 1<<63 || (u == 1<<63 && !neg) {
		s.pos = start
		return 0, s.errorf("integer overflows int64")
	}
	s.pos = i
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// uintValue reads a non-negative integer sent as a number or as a numeric
// string (Relay's deserialize_number_from_string); null reads as 0. bits
// bounds the value.
func (s *scanner) uintValue(bits int) (uint64, error) {
	c := s.peek()
	switch {
	case c == 'n':
		_, err := s.null()
		return 0, err
	case c == '"':
		start := s.pos
		b, err := s.readString()
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseUint(string(b), 10, bits)
		if err != nil {
			return 0, s.errorAt(start, "expected a non-negative integer string of at most "+strconv.Itoa(bits)+" bits")
		}
		return v, nil
	case c == '-':
		return 0, s.errorf("negative value")
	case c >= '0' && c <= '9':
		start := s.pos
		integer, err := s.scanNumber()
		if err != nil {
			return 0, err
		}
		if !integer {
			return 0, s.errorAt(start, "expected an integer")
		}
		v, err := strconv.ParseUint(string(s.data[start:s.pos]), 10, bits)
		if err != nil {
			return 0, s.errorAt(start, "integer overflows uint"+strconv.Itoa(bits))
		}
		return v, nil
	}
	return 0, s.unexpected("integer or numeric string")
}

// addrValue reads an address: "0x…" hex string, decimal string or number.
func (s *scanner) addrValue() (uint64, error) {
	c := s.peek()
	if c != '"' {
		return s.uintValue(64)
	}
	start := s.pos
	b, err := s.readString()
	if err != nil {
		return 0, err
	}
	v, ok := parseAddr(b)
	if !ok {
		return 0, s.errorAt(start, "invalid address "+strconv.Quote(string(b)))
	}
	return v, nil
}

// parseAddr parses "0x…" hex (at most 64 bits) or a decimal string.
func parseAddr(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		hex := b[2:]
		// Leading zeros are common ("0x0000000102adc700") and do not count
		// towards the 16-digit limit.
		for len(hex) > 1 && hex[0] == '0' {
			hex = hex[1:]
		}
		if len(hex) > 16 {
			return 0, false
		}
		var v uint64
		for _, c := range hex {
			switch {
			case c >= '0' && c <= '9':
				c -= '0'
			case c >= 'a' && c <= 'f':
				c = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				c = c - 'A' + 10
			default:
				return 0, false
			}
			v = v<<4 | uint64(c)
		}
		return v, true
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// boolValue reads true, false or null.
func (s *scanner) boolValue() (OptionalBool, error) {
	switch s.peek() {
	case 't':
		if bytes.HasPrefix(s.data[s.pos:], []byte("true")) {
			s.pos += 4
			return BoolTrue, nil
		}
	case 'f':
		if bytes.HasPrefix(s.data[s.pos:], []byte("false")) {
			s.pos += 5
			return BoolFalse, nil
		}
	case 'n':
		_, err := s.null()
		return BoolUnset, err
	default:
		return BoolUnset, s.unexpected("boolean")
	}
	return BoolUnset, s.errorf("invalid literal")
}

// floatValue reads a number as float64; null reads as 0.
func (s *scanner) floatValue() (float64, error) {
	c := s.peek()
	if c == 'n' {
		_, err := s.null()
		return 0, err
	}
	if c != '-' && (c < '0' || c > '9') {
		return 0, s.unexpected("number")
	}
	start := s.pos
	if _, err := s.scanNumber(); err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(string(s.data[start:s.pos]), 64)
	if err != nil {
		return 0, s.errorAt(start, "number out of float64 range")
	}
	return v, nil
}

// nanosValue reads a timestamp in seconds since the epoch (number or numeric
// string) as Unix nanoseconds, parsing the decimal text exactly
// (translator/internal/sentrytime); null reads as 0.
func (s *scanner) nanosValue() (int64, error) {
	s.peek()
	if v, end, ok := fastNanos(s.data, s.pos); ok {
		s.pos = end
		return v, nil
	}
	t, err := s.timeValue(sentrytime.ParseSeconds)
	return t.UnixNano(), err
}

// fastNanos reads a timestamp of the shape SDKs write (sentrytime.Scan)
// ended by a delimiter. It returns ok=false for anything else, which the
// exact general parser then handles.
func fastNanos(data []byte, i int) (v int64, end int, ok bool) {
	t, end, ok := sentrytime.Scan(data, i)
	if !ok || end >= len(data) || !isDelimiter(data[end]) {
		return 0, 0, false
	}
	return t.UnixNano(), end, true
}

// fastIndex reads a compact non-negative integer of at most 18 digits (which
// cannot overflow int64) at data[i:]; ok=false sends anything else to the
// general parser.
func fastIndex(data []byte, i int) (v int64, end int, ok bool) {
	if i >= len(data) || data[i] < '0' || data[i] > '9' {
		return 0, 0, false
	}
	if data[i] == '0' {
		return 0, i + 1, i+1 < len(data) && (data[i+1] < '0' || data[i+1] > '9')
	}
	v, j := digits(data, i, 18)
	if j >= len(data) || (data[j] >= '0' && data[j] <= '9') || data[j] == '.' || data[j] == 'e' || data[j] == 'E' {
		return 0, 0, false
	}
	return v, j, true
}

func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// timeValue reads the text of a timestamp (number or numeric string) with
// parse; null reads as 0.
func (s *scanner) timeValue(parse func([]byte) (sentrytime.Time, error)) (sentrytime.Time, error) {
	start := s.pos
	text, err := s.numberText()
	if err != nil || text == nil {
		return 0, err
	}
	t, err := parse(text)
	if err != nil {
		return 0, s.secondsError(start, text, err)
	}
	return t, nil
}

// numberText reads a number, or a string holding one, as its text; null
// reads as nil.
func (s *scanner) numberText() ([]byte, error) {
	c := s.peek()
	start := s.pos
	switch {
	case c == 'n':
		_, err := s.null()
		return nil, err
	case c == '"':
		return s.readString()
	case c == '-' || (c >= '0' && c <= '9'):
		if _, err := s.scanNumber(); err != nil {
			return nil, err
		}
		return s.data[start:s.pos], nil
	}
	return nil, s.unexpected("number")
}

// secondsError is the error of a timestamp text that parse refused.
func (s *scanner) secondsError(start int, text []byte, err error) error {
	if errors.Is(err, sentrytime.ErrOutOfRange) {
		return s.errorAt(start, sentrytime.ErrOutOfRange.Error()+": seconds "+strconv.Quote(string(text)))
	}
	return s.errorAt(start, "invalid or out-of-range seconds "+strconv.Quote(string(text)))
}

// skipValue consumes one value of any type, checking its syntax.
func (s *scanner) skipValue() error {
	switch c := s.peek(); {
	case c == '"':
		_, err := s.readString()
		return err
	case c == '{':
		if err := s.beginObject(); err != nil {
			return err
		}
		n := 0
		for {
			_, ok, err := s.objectNext(&n)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := s.skipValue(); err != nil {
				return err
			}
		}
	case c == '[':
		if err := s.beginArray(); err != nil {
			return err
		}
		n := 0
		for {
			ok, err := s.arrayNext(&n)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := s.skipValue(); err != nil {
				return err
			}
		}
	case c == 't':
		if bytes.HasPrefix(s.data[s.pos:], []byte("true")) {
			s.pos += 4
			return nil
		}
		return s.errorf("invalid literal")
	case c == 'f':
		if bytes.HasPrefix(s.data[s.pos:], []byte("false")) {
			s.pos += 5
			return nil
		}
		return s.errorf("invalid literal")
	case c == 'n':
		_, err := s.null()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.scanNumber()
		return err
	case c == 0:
		return s.errorf("unexpected end of input, expected a value")
	default:
		return s.errorf("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a value")
	}
}

// rawValue consumes one value and returns its JSON text, compacted so that
// it fits on one envelope line; null reads as "".
func (s *scanner) rawValue() (string, error) {
	if s.peek() == 'n' {
		_, err := s.null()
		return "", err
	}
	start := s.pos
	if err := s.skipValue(); err != nil {
		return "", err
	}
	raw := s.data[start:s.pos]
	if bytes.ContainsAny(raw, " \t\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return "", s.errorAt(start, "invalid JSON value")
		}
		raw = buf.Bytes()
	}
	if !utf8.Valid(raw) {
		// Invalid bytes can only sit inside strings (skipValue rejects them
		// elsewhere); replacing each one keeps the text valid JSON.
		raw = appendValidUTF8(nil, raw)
	}
	return s.intern(raw), nil
}

// appendValidUTF8 appends b with every byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, the replacement encoding/json makes.
func appendValidUTF8(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			dst = append(dst, b[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[i:i+size]...)
		}
		i += size
	}
	return dst
}

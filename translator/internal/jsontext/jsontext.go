// Package jsontext writes JSON text by hand for the translator's writers (the
// envelope and the profile chunk), where encoding/json's reflection and HTML
// escaping cost more than the whole document.
package jsontext

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// asciiEscapes is the escape of each ASCII byte in a JSON string, "" for
// a byte written as it is: the quote and the backslash, the control
// characters (by their short forms where JSON has one).
var asciiEscapes = func() (t [utf8.RuneSelf]string) {
	for c := range byte(0x20) {
		t[c] = string([]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]})
	}
	t['"'], t['\\'] = `\"`, `\\`
	t['\n'], t['\r'], t['\t'], t['\b'], t['\f'] = `\n`, `\r`, `\t`, `\b`, `\f`
	return t
}()

// runeEscape is the escape of a non-ASCII rune of size bytes, "" for one
// written as it is: an invalid byte becomes U+FFFD, as encoding/json does,
// and U+2028 and U+2029 are escaped so a line of output is also valid
// JavaScript.
func runeEscape(r rune, size int) string {
	switch {
	case r == utf8.RuneError && size == 1:
		return `\ufffd`
	case r == '\u2028':
		return `\u2028`
	case r == '\u2029':
		return `\u2029`
	}
	return ""
}

// AppendString appends s as a JSON string, without HTML escaping. Invalid
// UTF-8 bytes become U+FFFD, as encoding/json does, so the output is always
// valid UTF-8; U+2028 and U+2029 are escaped so a line of output is also
// valid JavaScript.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		esc, size := escapeAt(s, i)
		if esc != "" {
			dst = append(append(dst, s[start:i]...), esc...)
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// escapeAt is the escape of the character at s[i] ("" when it is written
// as it is) and its size in s.
func escapeAt(s string, i int) (string, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiEscapes[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return runeEscape(r, size), size
}

// StringLen is len(AppendString(nil, s)), without writing anything: what a
// writer needs to bound a document before it writes it.
func StringLen(s string) int {
	n := 2 // the quotes
	for i := 0; i < len(s); {
		esc, size := escapeAt(s, i)
		if esc != "" {
			n += len(esc)
		} else {
			n += size
		}
		i += size
	}
	return n
}

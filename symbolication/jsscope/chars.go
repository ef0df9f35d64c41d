package jsscope

import (
	"strings"
	"unicode/utf8"
)

// byteClass says what an ASCII byte can be in JavaScript source; a byte of
// a multi-byte character is taken as part of an identifier.
type byteClass uint8

const (
	clIdentStart  byteClass = 1 << iota // a letter, _, $, \ (an escape), non-ASCII
	clIdentPart                         // the above and digits
	clDigit                             // 0-9
	clSpace                             // space, tab, vertical tab, form feed
	clNumberPart                        // letters, digits, _ and . within a number
	clSinglePunct                       // a one-byte punctuator
)

// classes is the class of each byte: a lookup table, never written after
// it is made.
var classes = makeClasses()

func makeClasses() [256]byteClass {
	var t [256]byteClass
	set := func(chars string, c byteClass) {
		for i := range len(chars) {
			t[chars[i]] |= c
		}
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const digits = "0123456789"
	set(letters+"_$\\", clIdentStart|clIdentPart)
	set(digits, clIdentPart|clDigit|clNumberPart)
	set(letters+"_.", clNumberPart)
	set(" \t\v\f", clSpace)
	set(".;,<>+-*/%&|^!~?:=@", clSinglePunct)
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] |= clIdentStart | clIdentPart
	}
	return t
}

func isDigit(c byte) bool      { return classes[c]&clDigit != 0 }
func isIdentStart(c byte) bool { return classes[c]&clIdentStart != 0 }
func isIdentPart(c byte) bool  { return classes[c]&clIdentPart != 0 }

// unicodeSpaces are the white space characters beyond ASCII.
const unicodeSpaces = "\u00a0\ufeff\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"

func isSpaceRune(r rune) bool { return strings.ContainsRune(unicodeSpaces, r) }

// endsIdentRune reports whether a non-ASCII character ends an identifier:
// a space or a line terminator.
func endsIdentRune(r rune) bool { return strings.ContainsRune(unicodeSpaces+"\u2028\u2029", r) }

package jsscope

import (
	"bytes"
	"unicode/utf8"
)

// Position is a place in the generated (minified) source as source maps
// and JavaScript engines count it: a 0-based line and a 0-based column in
// UTF-16 code units. Lines end at \n, \r\n, \r, U+2028 and U+2029.
type Position struct {
	Line, Column int32
}

// Less orders positions by line, then column.
func (p Position) Less(q Position) bool {
	return p.Line < q.Line || p.Line == q.Line && p.Column < q.Column
}

// positionCursor turns byte offsets, asked in increasing order, into
// positions: it walks only the bytes since the last offset, so a bundle
// on one line of megabytes costs one pass, not one per token.
type positionCursor struct {
	src []byte
	off int
	pos Position
}

// at returns the position of byte offset off, off ≥ every earlier one.
func (c *positionCursor) at(off int) Position {
	for c.off < off {
		c.step()
	}
	return c.pos
}

// step moves past one character.
func (c *positionCursor) step() {
	switch b := c.src[c.off]; {
	case b == '\n':
		c.newLine(1)
	case b == '\r':
		c.carriageReturn()
	case b < utf8.RuneSelf:
		c.off++
		c.pos.Column++
	default:
		c.rune()
	}
}

// carriageReturn ends a line, except before a \n, where the line ends at
// the \n: an offset between the two is still on this line.
func (c *positionCursor) carriageReturn() {
	if c.off+1 < len(c.src) && c.src[c.off+1] == '\n' {
		c.off++
		c.pos.Column++
		return
	}
	c.newLine(1)
}

func (c *positionCursor) newLine(size int) {
	c.off += size
	c.pos.Line++
	c.pos.Column = 0
}

// rune steps over one multi-byte character: two UTF-16 units beyond the
// basic plane, one otherwise (and one per byte that is not UTF-8).
func (c *positionCursor) rune() {
	r, size := utf8.DecodeRune(c.src[c.off:])
	switch {
	case r == 0x2028 || r == 0x2029:
		c.newLine(size)
	case r > 0xffff:
		c.off += size
		c.pos.Column += 2
	default:
		c.off += size
		c.pos.Column++
	}
}

// isLineTerminatorAt reports whether a line terminator starts at src[i].
func isLineTerminatorAt(src []byte, i int) bool {
	switch src[i] {
	case '\n', '\r':
		return true
	case 0xe2:
		return isUnicodeLineEnd(src[i:])
	}
	return false
}

// isUnicodeLineEnd reports whether b starts with U+2028 or U+2029.
func isUnicodeLineEnd(b []byte) bool {
	s := string(b[:min(3, len(b))])
	return s == "\u2028" || s == "\u2029"
}

// lineTerminatorLen is the length of the line terminator at src[i] (2 for
// \r\n), or 1 when there is none (an escaped character).
func lineTerminatorLen(src []byte, i int) int {
	switch {
	case string(src[i:min(i+2, len(src))]) == "\r\n":
		return 2
	case isUnicodeLineEnd(src[i:]):
		return 3
	}
	return 1
}

// containsLineTerminator reports whether b holds a line terminator.
func containsLineTerminator(b []byte) bool {
	return bytes.ContainsAny(b, "\n\r\u2028\u2029")
}

package jsscope

import "unicode/utf8"

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
		b := c.src[c.off]
		switch {
		case b == '\n':
			c.newLine(1)
		case b == '\r':
			if c.off+1 < len(c.src) && c.src[c.off+1] == '\n' {
				// Counted at the \n, so that an offset between the two
				// is still on this line.
				c.off++
				c.pos.Column++
				continue
			}
			c.newLine(1)
		case b < utf8.RuneSelf:
			c.off++
			c.pos.Column++
		default:
			c.rune()
		}
	}
	return c.pos
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
		return i+2 < len(src) && src[i+1] == 0x80 && (src[i+2] == 0xa8 || src[i+2] == 0xa9)
	}
	return false
}

// lineTerminatorLen is the length of the line terminator at src[i] (2 for
// \r\n), or 1 when there is none (an escaped character).
func lineTerminatorLen(src []byte, i int) int {
	switch {
	case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
		return 2
	case src[i] == 0xe2 && isLineTerminatorAt(src, i):
		return 3
	}
	return 1
}

package sourcemap

import "sort"

// Token is what a segment maps a generated position to. Lines and columns
// are 0-based, as in source maps.
type Token struct {
	GenLine, GenColumn int
	// Source, Line and Column are the original position; HasSource is
	// false for a segment that maps to no source.
	Source       string
	Line, Column int
	HasSource    bool
	// Name is the original identifier at the position, empty when the
	// segment has none.
	Name string
}

// lineSegments returns the segments of generated line l.
func (m *Map) lineSegments(l int) []segment {
	if l < 0 || l >= m.Lines() {
		return nil
	}
	return m.segments[m.lineStart[l]:m.lineStart[l+1]]
}

// indexAtOrBefore returns the index within line l's segments of the last
// segment at or before column c, -1 when there is none.
func indexAtOrBefore(segs []segment, c int) int {
	return sort.Search(len(segs), func(i int) bool { return int(segs[i].genColumn) > c }) - 1
}

func (m *Map) token(line int, s segment) Token {
	t := Token{GenLine: line, GenColumn: int(s.genColumn)}
	if s.src >= 0 {
		t.Source, t.Line, t.Column, t.HasSource = m.Sources[s.src], int(s.srcLine), int(s.srcColumn), true
	}
	if s.name >= 0 {
		t.Name = m.Names[s.name]
	}
	return t
}

// At returns the segment at or before the generated position on the same
// line; false when the line has none there.
func (m *Map) At(line, column int) (Token, bool) {
	segs := m.lineSegments(line)
	i := indexAtOrBefore(segs, column)
	if i < 0 {
		return Token{}, false
	}
	return m.token(line, segs[i]), true
}

// FunctionAt resolves a function by the position profilers give it: V8 and
// the JS Self-Profiling API report where the function starts, the "(" of
// its parameter list (or its single unparenthesised parameter), while the
// function's original name is on its name token, just before. The answer is
// the last segment strictly before the column on the same line, when it
// names an identifier; false otherwise (an anonymous function, a method the
// minifier kept, a line without segments there). A segment at the column
// itself is the first parameter, never the function's name.
func (m *Map) FunctionAt(line, column int) (Token, bool) {
	segs := m.lineSegments(line)
	i := sort.Search(len(segs), func(i int) bool { return int(segs[i].genColumn) >= column }) - 1
	if i < 0 || segs[i].name < 0 || segs[i].src < 0 {
		return Token{}, false
	}
	return m.token(line, segs[i]), true
}

// functionAtColumn resolves a function by its column alone, for frames
// whose line is not the function's: @sentry/profiling-node runs V8 in
// caller-line mode, where a frame's line is the line of its call site (in
// another file, at times) and only its column is the function's own. The
// answer is the function of the only line whose segments name one at that
// column; false when no line or more than one does.
func (m *Map) functionAtColumn(column int) (Token, bool) {
	var found Token
	n := 0
	for l := range m.Lines() {
		if t, ok := m.FunctionAt(l, column); ok {
			if found, n = t, n+1; n > 1 {
				return Token{}, false
			}
		}
	}
	return found, n == 1
}

// PositionAt returns the segment at or before a position like At, but for
// a line without segments (a caller's line, see functionAtColumn) it looks
// on the map's only line with segments when there is exactly one.
func (m *Map) PositionAt(line, column int) (Token, bool) {
	if len(m.lineSegments(line)) == 0 && m.onlyLine >= 0 {
		line = m.onlyLine
	}
	return m.At(line, column)
}

package sourcemap

import (
	"cmp"
	"slices"
	"sort"
)

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
// column (FunctionAt's rule); false when no line or more than one does.
//
// It is a binary search in the map's column index, made on the first call
// (not every map is asked by column), in time O(n log n) and memory O(n) for
// n named segments: asking each line instead costs the map's size per frame.
func (m *Map) functionAtColumn(column int) (Token, bool) {
	m.columnsOnce.Do(m.indexColumns)
	i := sort.Search(len(m.columns), func(i int) bool { return int64(m.columns[i].start) > int64(column) }) - 1
	if i < 0 || m.columns[i].seg < 0 {
		return Token{}, false
	}
	seg := int(m.columns[i].seg)
	line := sort.Search(m.Lines(), func(l int) bool { return int(m.lineStart[l+1]) > seg })
	return m.token(line, m.segments[seg]), true
}

// columnSpan is one piece of the column index: from column start (0-based)
// to the next span's start, the columns at which exactly one line's
// FunctionAt names a function, seg being that segment, or none
// (seg == noFunction) or several (seg == severalFunctions).
type columnSpan struct {
	start uint32 // a segment's column + 1 or + 2: at most 1<<31
	seg   int32
}

const (
	noFunction       = -1
	severalFunctions = -2
)

// columnEvent opens (+1) or closes (-1) the columns a named segment answers
// FunctionAt for.
type columnEvent struct {
	at    int64
	delta int32
	seg   int32
}

// indexColumns builds the column index. A named segment answers FunctionAt
// on its line for the columns after its own up to the next segment's
// (inclusive), or all columns after its own when it is the line's last:
// each is an interval, and the index is their overlap count, swept once.
// While exactly one interval is open, the sum of the open segments is that
// segment.
func (m *Map) indexColumns() {
	events := m.columnEvents()
	slices.SortFunc(events, func(a, b columnEvent) int { return cmp.Compare(a.at, b.at) })
	m.columns = slices.Clip(sweepColumns(events))
}

// isNamed reports whether a segment names a function FunctionAt answers.
func (s segment) isNamed() bool { return s.name >= 0 && s.src >= 0 }

// columnEvents are the openings and closings of every named segment's
// interval, unsorted.
func (m *Map) columnEvents() []columnEvent {
	named := 0
	for _, s := range m.segments {
		if s.isNamed() {
			named++
		}
	}
	events := make([]columnEvent, 0, 2*named)
	for l := range m.Lines() {
		events = m.lineColumnEvents(events, int(m.lineStart[l]), int(m.lineStart[l+1]))
	}
	return events
}

// lineColumnEvents appends the events of the segments lo to hi, one line.
func (m *Map) lineColumnEvents(events []columnEvent, lo, hi int) []columnEvent {
	for i := lo; i < hi; i++ {
		s := m.segments[i]
		if !s.isNamed() {
			continue
		}
		from := int64(s.genColumn) + 1
		if i+1 < hi {
			to := int64(m.segments[i+1].genColumn) // inclusive
			if to < from {
				continue // a segment at the same column follows: it answers
			}
			events = append(events, columnEvent{at: to + 1, delta: -1, seg: int32(i)})
		}
		events = append(events, columnEvent{at: from, delta: 1, seg: int32(i)})
	}
	return events
}

// sweepColumns turns sorted events into spans: the overlap count at each
// event's column, and while exactly one interval is open, the sum of the
// open segments is that segment.
func sweepColumns(events []columnEvent) []columnSpan {
	var spans []columnSpan
	var open, sum int64
	for k := 0; k < len(events); {
		at := events[k].at
		for ; k < len(events) && events[k].at == at; k++ {
			open += int64(events[k].delta)
			sum += int64(events[k].delta) * int64(events[k].seg)
		}
		seg := spanSegment(open, sum)
		if n := len(spans); n > 0 && spans[n-1].seg == seg {
			continue
		}
		spans = append(spans, columnSpan{start: uint32(at), seg: seg})
	}
	return spans
}

// spanSegment is the segment of a span where open intervals overlap and
// sum is the sum of their segments.
func spanSegment(open, sum int64) int32 {
	switch {
	case open == 1:
		return int32(sum)
	case open > 1:
		return severalFunctions
	}
	return noFunction
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

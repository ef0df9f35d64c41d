package sourcemap

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Map is a parsed source map. Its segments are kept in one slice sorted by
// generated position, with the first segment of each generated line
// indexed, so a lookup is a binary search within one line.
type Map struct {
	// File is the map's "file": the generated file's name.
	File string
	// DebugID is the map's "debugId" (or "debug_id"), lower case; empty
	// when it has none.
	DebugID string
	// Sources are the original sources' names, "sourceRoot" applied.
	Sources []string
	// Names are the original identifiers segments refer to.
	Names []string

	segments []segment
	// onlyLine is the one generated line with segments, -1 when there are
	// none or several: a minified bundle is usually one line.
	onlyLine int
	// lineStart[l] is the index of the first segment of generated line l;
	// the last entry is len(segments).
	lineStart []int32
	size      int64

	// columns is the index of functionAtColumn, made on its first call.
	columnsOnce sync.Once
	columns     []columnSpan
	// hermes is set for a map of Hermes bytecode (hermes.go).
	hermes *hermesMap
}

// segment is one decoded mapping; src and name are -1 when absent.
type segment struct {
	genColumn, src, srcLine, srcColumn, name int32
}

type rawMap struct {
	Version    int               `json:"version"`
	File       string            `json:"file"`
	SourceRoot string            `json:"sourceRoot"`
	Sources    []*string         `json:"sources"`
	Names      []string          `json:"names"`
	Mappings   string            `json:"mappings"`
	Sections   []json.RawMessage `json:"sections"`
	DebugID    string            `json:"debugId"`
	DebugID2   string            `json:"debug_id"`
	hermesFields
}

// Parse decodes a version 3 source map. Index maps ("sections") are not
// supported and return an error.
func Parse(data []byte) (*Map, error) {
	var raw rawMap
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	if err := checkRaw(&raw); err != nil {
		return nil, err
	}
	m := &Map{File: raw.File, Names: raw.Names, DebugID: strings.ToLower(cmpOr(raw.DebugID, raw.DebugID2))}
	m.Sources = joinSourceRoots(raw.SourceRoot, raw.Sources)
	if err := m.decodeMappings(raw.Mappings); err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	m.onlyLine = m.findOnlyLine()
	m.hermes = newHermesMap(&raw, len(m.Sources))
	m.size = m.measure()
	return m, nil
}

// checkRaw refuses what Parse does not read: index maps, other versions.
func checkRaw(raw *rawMap) error {
	if raw.Sections != nil {
		return errors.New("source map: index maps (sections) are not supported")
	}
	if raw.Version != 3 {
		return fmt.Errorf("source map: version %d, want 3", raw.Version)
	}
	return nil
}

// joinSourceRoots names the sources with "sourceRoot" applied; a null
// source is "".
func joinSourceRoots(root string, sources []*string) []string {
	out := make([]string, len(sources))
	for i, s := range sources {
		if s != nil {
			out[i] = joinSourceRoot(root, *s)
		}
	}
	return out
}

// measure is the map's footprint: a segment takes 20 bytes, and the
// column index at most two spans of 8 bytes per named segment, charged up
// front as it is made later.
func (m *Map) measure() int64 {
	size := int64(len(m.segments))*20 + int64(len(m.lineStart))*4
	for _, s := range m.segments {
		if s.name >= 0 {
			size += 16
		}
	}
	if m.hermes != nil {
		size += m.hermes.size()
	}
	return size + stringsBytes(m.Sources) + stringsBytes(m.Names)
}

// stringsBytes is what a slice of strings holds.
func stringsBytes(ss []string) int64 {
	var n int64
	for _, s := range ss {
		n += int64(len(s)) + 16
	}
	return n
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func joinSourceRoot(root, source string) string {
	if root == "" || strings.Contains(source, "://") || strings.HasPrefix(source, "/") {
		return source
	}
	return strings.TrimSuffix(root, "/") + "/" + source
}

// Size is the map's approximate memory footprint in bytes, what a cache
// charges for it.
func (m *Map) Size() int64 { return m.size }

// Lines is the number of generated lines the map has segments for.
func (m *Map) Lines() int { return len(m.lineStart) - 1 }

// decodeMappings decodes "mappings": lines separated by ';', segments by
// ',', each of 1, 4 or 5 VLQ fields; the generated column restarts on each
// line, the other fields are relative to the previous segment's across
// lines. This loop is the parse's hot path: the running fields stay in
// local variables and each segment is read and built in place (reading or
// building it in a function of its own made decoding 1.2 to 1.5 times
// slower); the range checks are one inlined function, the errors another.
func (m *Map) decodeMappings(s string) error {
	m.segments = make([]segment, 0, strings.Count(s, ",")+strings.Count(s, ";")+1)
	m.lineStart = append(make([]int32, 0, strings.Count(s, ";")+2), 0)
	var fields [5]int64
	var col, src, srcLine, srcCol, name int64
	for i := 0; i <= len(s); {
		if i == len(s) || s[i] == ';' {
			m.endLine()
			col = 0
			i++
			continue
		}
		if s[i] == ',' {
			i++
			continue
		}
		n := 0
		for i < len(s) && s[i] != ',' && s[i] != ';' {
			if n == len(fields) {
				return fmt.Errorf("mappings: segment with more than 5 fields at offset %d", i)
			}
			v, next, err := decodeVLQ(s, i)
			if err != nil {
				return err
			}
			fields[n], i = v, next
			n++
		}
		seg := segment{src: -1, name: -1}
		col += fields[0]
		seg.genColumn = int32(col)
		if n >= 4 {
			src, srcLine, srcCol = src+fields[1], srcLine+fields[2], srcCol+fields[3]
			seg.src, seg.srcLine, seg.srcColumn = int32(src), int32(srcLine), int32(srcCol)
		}
		if n == 5 {
			name += fields[4]
			seg.name = int32(name)
		}
		if !m.validSegment(n, col, src, srcLine, srcCol, name) {
			return m.segmentError(n, i, col, src, srcLine, srcCol, name)
		}
		if m.segments = append(m.segments, seg); len(m.segments) > math.MaxInt32 {
			return errors.New("mappings: too many segments")
		}
	}
	return nil
}

// endLine closes the generated line being decoded.
func (m *Map) endLine() {
	m.sortLine(len(m.lineStart) - 1)
	m.lineStart = append(m.lineStart, int32(len(m.segments)))
}

// validSegment: 1, 4 or 5 fields, whose values are in range. The running
// values a segment does not set were checked by the segment that did, so
// one comparison of them all together says that each is within 0 and
// MaxInt32 (a negative one sets the top bit).
func (m *Map) validSegment(n int, col, src, srcLine, srcCol, name int64) bool {
	return validFieldCount(n) && uint64(col|src|srcLine|srcCol|name) <= math.MaxInt32 &&
		(n < 4 || src < int64(len(m.Sources))) && (n < 5 || name < int64(len(m.Names)))
}

// validOriginal: a source of the map, and a line and column that fit.
func (m *Map) validOriginal(src, srcLine, srcCol int64) bool {
	return src < int64(len(m.Sources)) && fitsInt32(src) && fitsInt32(srcLine) && fitsInt32(srcCol)
}

// segmentError says which check segmentOf failed; i is the offset after
// the segment.
func (m *Map) segmentError(n, i int, col, src, srcLine, srcCol, name int64) error {
	switch {
	case !validFieldCount(n):
		return fmt.Errorf("mappings: segment of %d fields before offset %d", n, i)
	case !fitsInt32(col):
		return fmt.Errorf("mappings: generated column %d out of range before offset %d", col, i)
	case n >= 4 && !m.validOriginal(src, srcLine, srcCol):
		return fmt.Errorf("mappings: source %d line %d column %d out of range before offset %d", src, srcLine, srcCol, i)
	}
	return fmt.Errorf("mappings: name %d out of range before offset %d", name, i)
}

// validFieldCount: a segment has a generated column, then a source, line
// and column, then a name.
func validFieldCount(n int) bool { return n == 1 || n == 4 || n == 5 }

func fitsInt32(v int64) bool { return v >= 0 && v <= math.MaxInt32 }

// sortLine orders the segments of the line being decoded by generated
// column; producers write them in order, so this is almost always a check.
func (m *Map) sortLine(line int) {
	segs := m.segments[m.lineStart[line]:]
	if !slices.IsSortedFunc(segs, compareColumn) {
		slices.SortStableFunc(segs, compareColumn)
	}
}

func compareColumn(a, b segment) int { return int(a.genColumn) - int(b.genColumn) }

func (m *Map) findOnlyLine() int {
	only := -1
	for l := range m.Lines() {
		if m.lineStart[l] != m.lineStart[l+1] {
			if only >= 0 {
				return -1
			}
			only = l
		}
	}
	return only
}

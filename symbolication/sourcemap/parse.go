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
// lines.
func (m *Map) decodeMappings(s string) error {
	m.segments = make([]segment, 0, strings.Count(s, ",")+strings.Count(s, ";")+1)
	m.lineStart = append(make([]int32, 0, strings.Count(s, ";")+2), 0)
	d := mappingsDecoder{s: s, sources: int64(len(m.Sources)), names: int64(len(m.Names))}
	for d.i <= len(s) {
		switch {
		case d.i == len(s) || s[d.i] == ';':
			m.endLine()
			d.col = 0
			d.i++
		case s[d.i] == ',':
			d.i++
		default:
			if err := m.appendSegment(&d); err != nil {
				return err
			}
		}
	}
	return nil
}

// endLine closes the generated line being decoded.
func (m *Map) endLine() {
	m.sortLine(len(m.lineStart) - 1)
	m.lineStart = append(m.lineStart, int32(len(m.segments)))
}

// appendSegment decodes the segment at d's position.
func (m *Map) appendSegment(d *mappingsDecoder) error {
	seg, err := d.segment()
	if err != nil {
		return err
	}
	m.segments = append(m.segments, seg)
	if len(m.segments) > math.MaxInt32 {
		return errors.New("mappings: too many segments")
	}
	return nil
}

// mappingsDecoder is the state of decodeMappings: the position in the
// text, and the previous segment's fields, which each segment's are
// relative to.
type mappingsDecoder struct {
	s                               string
	i                               int
	col, src, srcLine, srcCol, name int64
	// sources and names are the map's counts: a field past them is
	// malformed.
	sources, names int64
}

// segment decodes one segment of 1, 4 or 5 fields.
func (d *mappingsDecoder) segment() (segment, error) {
	fields, n, err := d.fields()
	if err != nil {
		return segment{}, err
	}
	if !validFieldCount(n) {
		return segment{}, fmt.Errorf("mappings: segment of %d fields before offset %d", n, d.i)
	}
	seg := segment{src: -1, name: -1}
	err = d.generated(&seg, fields[0])
	if err == nil && n >= 4 {
		err = d.original(&seg, fields[1:4])
	}
	if err == nil && n == 5 {
		err = d.named(&seg, fields[4])
	}
	return seg, err
}

// validFieldCount: a segment has a generated column, then a source, line
// and column, then a name.
func validFieldCount(n int) bool { return n == 1 || n == 4 || n == 5 }

// fields reads the VLQ values of one segment, up to the next ',' or ';'.
func (d *mappingsDecoder) fields() ([5]int64, int, error) {
	var fields [5]int64
	n := 0
	for ; d.i < len(d.s) && d.s[d.i] != ',' && d.s[d.i] != ';'; n++ {
		if n == len(fields) {
			return fields, n, fmt.Errorf("mappings: segment with more than 5 fields at offset %d", d.i)
		}
		v, next, err := decodeVLQ(d.s, d.i)
		if err != nil {
			return fields, n, err
		}
		fields[n], d.i = v, next
	}
	return fields, n, nil
}

// generated applies a segment's generated column.
func (d *mappingsDecoder) generated(seg *segment, delta int64) error {
	d.col += delta
	if !fitsInt32(d.col) {
		return fmt.Errorf("mappings: generated column %d out of range before offset %d", d.col, d.i)
	}
	seg.genColumn = int32(d.col)
	return nil
}

// original applies a segment's source, line and column.
func (d *mappingsDecoder) original(seg *segment, delta []int64) error {
	d.src, d.srcLine, d.srcCol = d.src+delta[0], d.srcLine+delta[1], d.srcCol+delta[2]
	if d.src >= d.sources || !fitsInt32(d.src) || !fitsInt32(d.srcLine) || !fitsInt32(d.srcCol) {
		return fmt.Errorf("mappings: source %d line %d column %d out of range before offset %d", d.src, d.srcLine, d.srcCol, d.i)
	}
	seg.src, seg.srcLine, seg.srcColumn = int32(d.src), int32(d.srcLine), int32(d.srcCol)
	return nil
}

// named applies a segment's name.
func (d *mappingsDecoder) named(seg *segment, delta int64) error {
	d.name += delta
	if d.name >= d.names || !fitsInt32(d.name) {
		return fmt.Errorf("mappings: name %d out of range before offset %d", d.name, d.i)
	}
	seg.name = int32(d.name)
	return nil
}

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

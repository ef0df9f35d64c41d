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
	if raw.Sections != nil {
		return nil, errors.New("source map: index maps (sections) are not supported")
	}
	if raw.Version != 3 {
		return nil, fmt.Errorf("source map: version %d, want 3", raw.Version)
	}
	m := &Map{File: raw.File, Names: raw.Names, DebugID: strings.ToLower(cmpOr(raw.DebugID, raw.DebugID2))}
	m.Sources = make([]string, len(raw.Sources))
	for i, s := range raw.Sources {
		if s != nil {
			m.Sources[i] = joinSourceRoot(raw.SourceRoot, *s)
		}
	}
	if err := m.decodeMappings(raw.Mappings); err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	m.onlyLine = m.findOnlyLine()
	// A segment takes 20 bytes, and the column index at most two spans
	// of 8 bytes per named segment, charged up front as it is made later.
	m.size = int64(len(m.segments))*20 + int64(len(m.lineStart))*4
	for _, s := range m.segments {
		if s.name >= 0 {
			m.size += 16
		}
	}
	for _, s := range m.Sources {
		m.size += int64(len(s)) + 16
	}
	for _, s := range m.Names {
		m.size += int64(len(s)) + 16
	}
	return m, nil
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
	var fields [5]int64
	var col, src, srcLine, srcCol, name int64
	for i := 0; i <= len(s); {
		if i == len(s) || s[i] == ';' {
			m.sortLine(len(m.lineStart) - 1)
			m.lineStart = append(m.lineStart, int32(len(m.segments)))
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
		if n != 1 && n != 4 && n != 5 {
			return fmt.Errorf("mappings: segment of %d fields before offset %d", n, i)
		}
		seg := segment{src: -1, name: -1}
		col += fields[0]
		if !fitsInt32(col) {
			return fmt.Errorf("mappings: generated column %d out of range before offset %d", col, i)
		}
		seg.genColumn = int32(col)
		if n >= 4 {
			src, srcLine, srcCol = src+fields[1], srcLine+fields[2], srcCol+fields[3]
			if src >= int64(len(m.Sources)) || !fitsInt32(src) || !fitsInt32(srcLine) || !fitsInt32(srcCol) {
				return fmt.Errorf("mappings: source %d line %d column %d out of range before offset %d", src, srcLine, srcCol, i)
			}
			seg.src, seg.srcLine, seg.srcColumn = int32(src), int32(srcLine), int32(srcCol)
		}
		if n == 5 {
			name += fields[4]
			if name >= int64(len(m.Names)) || !fitsInt32(name) {
				return fmt.Errorf("mappings: name %d out of range before offset %d", name, i)
			}
			seg.name = int32(name)
		}
		m.segments = append(m.segments, seg)
		if len(m.segments) > math.MaxInt32 {
			return errors.New("mappings: too many segments")
		}
	}
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

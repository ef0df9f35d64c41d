package sourcemap

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// functionMap is one original source's function map, the first metadata
// entry Metro writes for it in `x_facebook_sources`: where each function
// of the source starts and the name Metro's generateFunctionMap gives it
// (a declaration's name, `Class#method` for a method, `items.map$argument_0`
// for a callback, `<global>` for the module's top level). The function
// enclosing an original position is the last one starting at or before it,
// metro-symbolicate's rule (SourceMetadataMapConsumer.functionNameFor),
// which Sentry's Symbolicator applies too.
type functionMap struct {
	names  []string
	starts []functionStart
}

// functionStart is where a function's range starts: line 1-based, column
// 0-based, as the function map encodes them; name indexes functionMap.names.
type functionStart struct {
	line, column, name int32
}

// rawFunctionMap is the JSON of a function map.
type rawFunctionMap struct {
	Names    []string `json:"names"`
	Mappings string   `json:"mappings"`
}

// parseFacebookSources reads `x_facebook_sources`: one entry per source of
// the map (null or an array of metadata, whose first element is the function
// map or null). It returns the function map of each source, nil where there
// is none. A source whose function map is broken gets none: its frames
// keep their own names, the map's positions still resolve them.
func parseFacebookSources(raw json.RawMessage, sources int) ([]*functionMap, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("x_facebook_sources: %w", err)
	}
	if len(entries) > sources {
		return nil, fmt.Errorf("x_facebook_sources: %d entries for %d sources", len(entries), sources)
	}
	maps := make([]*functionMap, len(entries))
	for i, e := range entries {
		maps[i] = firstFunctionMap(e)
	}
	return maps, nil
}

// firstFunctionMap decodes the function map of one source's metadata, nil
// when it has none or it is broken. Metro's metadata array holds the
// function map alone; an entry with anything else is read as broken.
func firstFunctionMap(metadata json.RawMessage) *functionMap {
	var fields []*rawFunctionMap
	if err := json.Unmarshal(metadata, &fields); err != nil || len(fields) == 0 || fields[0] == nil {
		return nil
	}
	fm, err := decodeFunctionMap(fields[0].Names, fields[0].Mappings)
	if err != nil {
		return nil
	}
	return fm
}

// decodeFunctionMap decodes a function map's mappings: groups separated by
// ';', in each of which the column starts again at 0, of segments separated
// by ',', each a column delta, a name delta and an optional line delta
// (base64 VLQ); the line starts at 1, the name index at 0, and both run on
// across groups.
func decodeFunctionMap(names []string, mappings string) (*functionMap, error) {
	fm := &functionMap{names: names, starts: make([]functionStart, 0, strings.Count(mappings, ",")+strings.Count(mappings, ";")+1)}
	line, name := int64(1), int64(0)
	for group := range strings.SplitSeq(mappings, ";") {
		column := int64(0)
		for seg := range strings.SplitSeq(group, ",") {
			if seg == "" {
				continue
			}
			d, err := decodeFunctionSegment(seg)
			if err != nil {
				return nil, err
			}
			column, name, line = column+d[0], name+d[1], line+d[2]
			if !fm.validStart(line, column, name) {
				return nil, fmt.Errorf("function map: line %d column %d name %d out of range", line, column, name)
			}
			fm.starts = append(fm.starts, functionStart{line: int32(line), column: int32(column), name: int32(name)})
		}
	}
	// generateFunctionMap writes the starts in order; a map that does not
	// is sorted, so that the lookup stays a binary search.
	slices.SortStableFunc(fm.starts, compareStart)
	return fm, nil
}

// decodeFunctionSegment reads a segment's two or three values.
func decodeFunctionSegment(seg string) (d [3]int64, err error) {
	n, i := 0, 0
	for ; i < len(seg); n++ {
		if n == len(d) {
			return d, fmt.Errorf("function map: segment %q has more than 3 values", seg)
		}
		if d[n], i, err = decodeVLQ(seg, i); err != nil {
			return d, fmt.Errorf("function map: %w", err)
		}
	}
	if n < 2 {
		return d, fmt.Errorf("function map: segment %q has %d value", seg, n)
	}
	return d, nil
}

// validStart: a line from 1 and a column from 0 that fit, a name of the map.
func (fm *functionMap) validStart(line, column, name int64) bool {
	return line >= 1 && fitsInt32(line) && fitsInt32(column) && name >= 0 && name < int64(len(fm.names))
}

func compareStart(a, b functionStart) int {
	return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.column, b.column))
}

// nameAt is the name of the function enclosing an original position (line
// and column 0-based, as a Token has them): the last function starting at
// or before it; false before the first.
func (fm *functionMap) nameAt(line, column int) (string, bool) {
	at := functionStart{line: int32(line + 1), column: int32(column)}
	i, found := slices.BinarySearchFunc(fm.starts, at, compareStart)
	if found {
		// Several functions can start at one position (a callback's range
		// begins where its call's does): the last of them is the innermost.
		for i+1 < len(fm.starts) && compareStart(fm.starts[i+1], at) == 0 {
			i++
		}
		i++
	}
	if i == 0 {
		return "", false
	}
	return fm.names[fm.starts[i-1].name], true
}

// size is what the function map holds.
func (fm *functionMap) size() int64 {
	return int64(len(fm.starts))*12 + stringsBytes(fm.names)
}

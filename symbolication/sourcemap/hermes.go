package sourcemap

import (
	"encoding/json"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// hermesMap is what a map of React Native's Hermes bytecode adds: the map
// hermesc writes (`x_hermes_function_offsets`), composed with Metro's
// (`x_facebook_sources`, the function maps), maps line 1 and a column that
// is a bytecode offset. Its frames are positions inside functions, not
// where functions start, so they are looked up as Sentry does for every
// Hermes frame: the segment at or before the offset, named by the function
// map of its source.
type hermesMap struct {
	// functions holds the function map of each source (by index in
	// Map.Sources), nil where there is none.
	functions []*functionMap
}

// newHermesMap reads a map's Hermes fields; nil when it has none. A
// malformed `x_facebook_sources` leaves the map without function maps
// rather than unusable: its positions still resolve, and its frames keep
// the names Hermes gave them.
func newHermesMap(raw *rawMap, sources int) *hermesMap {
	if !present(raw.FacebookSources) && !present(raw.HermesFunctionOffsets) {
		return nil
	}
	h := &hermesMap{}
	if present(raw.FacebookSources) {
		h.functions, _ = parseFacebookSources(raw.FacebookSources, sources)
	}
	return h
}

// size is what the function maps hold.
func (h *hermesMap) size() int64 {
	var n int64
	for _, fm := range h.functions {
		if fm != nil {
			n += fm.size()
		}
	}
	return n
}

// IsHermes reports whether the map is of Hermes bytecode (it has
// `x_hermes_function_offsets` or Metro's `x_facebook_sources`).
func (m *Map) IsHermes() bool { return m.hermes != nil }

// frameOf resolves a frame by the rules of its map: a Hermes frame by its
// bytecode offset, any other by where its function starts (functionOf).
func (m *Map) frameOf(f symbolication.Frame) (Token, bool) {
	if m.hermes != nil {
		return m.hermesFrameOf(f)
	}
	return m.functionOf(f)
}

// hermesFrameOf resolves a frame of Hermes bytecode as React Native's SDK
// sends it: line 1 and column the bytecode offset + 1 (an error's `address
// at` offset, which Hermes prints 0-based, or a profile's function address
// plus offset). The offset is the instruction running (the throw, or the
// call in a caller), so the answer is the segment at or before it, on the
// map's only line when the frame's line has none; the function is the one
// the function map of its source encloses it in, else the frame's own name.
func (m *Map) hermesFrameOf(f symbolication.Frame) (Token, bool) {
	line := f.Line - 1
	if len(m.lineSegments(line)) == 0 && m.onlyLine >= 0 {
		line = m.onlyLine
	}
	segs := m.lineSegments(line)
	i := indexAtOrBefore(segs, f.Column-1)
	if i < 0 || segs[i].src < 0 {
		return Token{}, false
	}
	tok := m.token(line, segs[i])
	tok.Name = m.hermes.functionName(segs[i], f.Function)
	return tok, true
}

// functionName names the function enclosing a segment's original
// position by its source's function map; own when there is none.
func (h *hermesMap) functionName(s segment, own string) string {
	if int(s.src) >= len(h.functions) || h.functions[s.src] == nil {
		return own
	}
	if name, ok := h.functions[s.src].nameAt(int(s.srcLine), int(s.srcColumn)); ok {
		return name
	}
	return own
}

// hermesFields are the members of a map that say it is of Hermes bytecode.
type hermesFields struct {
	FacebookSources       json.RawMessage `json:"x_facebook_sources"`
	HermesFunctionOffsets json.RawMessage `json:"x_hermes_function_offsets"`
}

// present: a member that is there and not null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

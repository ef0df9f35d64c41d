package proguard

// StackFrame is one obfuscated frame as a runtime reports it.
type StackFrame struct {
	Class, Method string
	Line          int // 0 when unknown
}

// RemapStack remaps a whole stack, innermost first, as retrace does: each
// frame as Remap does it, plus R8 outlines, which only a stack can undo.
// R8 moves code shared by several methods into an outline method; a frame
// in an outline is dropped, and its line (a position in the outline) is
// mapped through the caller's outline call site metadata to the caller's
// own minified line, which is then remapped. Frames of classes the mapping
// does not have are kept with their names and line (and no file).
func (m *Mapping) RemapStack(stack []StackFrame) []Frame {
	out := make([]Frame, 0, len(stack))
	outlinePos := 0 // position in an outline just dropped, 0 if none
	for _, f := range stack {
		line := f.Line
		if outlinePos > 0 {
			if mapped, ok := m.outlineCallsite(f.Class, f.Method, line, outlinePos); ok {
				line = mapped
			}
			outlinePos = 0
		}
		if m.isOutline(f.Class, f.Method) {
			outlinePos = max(line, 0)
			continue
		}
		frames := m.Remap(f.Class, f.Method, line)
		if frames == nil {
			frames = []Frame{{Class: f.Class, Method: f.Method, Line: line}}
		}
		out = append(out, frames...)
	}
	return out
}

// isOutline reports whether an obfuscated method is an R8 outline (the
// metadata marks the method, so any of its members tells).
func (m *Mapping) isOutline(className, method string) bool {
	c, ok := m.classes[className]
	if !ok {
		return false
	}
	members := c.methods[method]
	return len(members) > 0 && members[0].outline
}

// outlineCallsite maps a position in an outline to the minified line of
// the call site in the caller at line: the member covering line (or an
// unranged one) that lists the position.
func (m *Mapping) outlineCallsite(className, method string, line, pos int) (int, bool) {
	c, ok := m.classes[className]
	if !ok {
		return 0, false
	}
	for _, mb := range c.methods[method] {
		if !mb.covers(line) {
			continue
		}
		if mapped, ok := mb.outlineCallsite[int32(pos)]; ok {
			return int(mapped), true
		}
	}
	return 0, false
}

// covers reports whether a member's minified range holds line; a member
// without a range covers every line.
func (mb *member) covers(line int) bool {
	return !mb.hasRange || mb.end == 0 || int(mb.start) <= line && line <= int(mb.end)
}

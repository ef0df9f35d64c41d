package proguard

import (
	"slices"
	"strings"
	"unsafe"
)

// Frame is one original (de-obfuscated) Java frame.
type Frame struct {
	Class  string // fully qualified original class, e.g. "com.example.Cart"
	Method string // original method name
	File   string // source file, from R8's sourceFile metadata or derived from Class
	Line   int    // original line; 0 when the mapping does not say
}

// Mapping is a parsed ProGuard/R8 mapping file. It is immutable after
// Parse and safe for concurrent use.
type Mapping struct {
	classes     map[string]*class // by obfuscated name
	files       map[string]string // original class → source file name
	stringBytes int64
	members     int
	skipped     int
}

// class is one `original -> obfuscated:` block.
type class struct {
	original string
	methods  map[string][]member // by obfuscated method name, in file order
	groups   map[string]*methodIndex
}

// member is one method line. Consecutive members of the same obfuscated
// name with the same minified range are one inline group: the first line is
// the innermost inlined method and the last the method that contains the
// code, as R8 writes them.
type member struct {
	name, class        string // original method and the class it came from
	start, end         int32  // minified line range (hasRange)
	origStart, origEnd int32  // original lines (hasOriginal)
	hasRange           bool
	hasOriginal        bool            // origStart/origEnd were written (":0:0" means unknown)
	outline            bool            // R8 outline method: its frame is replaced by its call site's
	outlineCallsite    map[int32]int32 // outline position → line in this method
}

// methodIndex locates the inline groups of one obfuscated method name.
type methodIndex struct {
	groups []group
	// disjoint: ranged groups sorted by start with no overlap, so a line
	// is found by binary search; otherwise they are scanned in file order.
	disjoint bool
}

// group is members[lo:hi] of one obfuscated method name.
type group struct {
	start, end int32
	lo, hi     int32
	hasRange   bool
}

// finish builds the lookup indexes once all lines are read.
func (m *Mapping) finish() {
	for _, c := range m.classes {
		c.groups = make(map[string]*methodIndex, len(c.methods))
		for obf, members := range c.methods {
			c.groups[obf] = indexMethod(members)
		}
	}
}

func indexMethod(members []member) *methodIndex {
	idx := &methodIndex{groups: groupMembers(members)}
	// Ranged groups first, by start; unranged ones after, in file order.
	sorted := idx.groups
	if !slices.IsSortedFunc(sorted, compareGroups) {
		sorted = slices.Clone(sorted)
		slices.SortStableFunc(sorted, compareGroups)
	}
	if idx.disjoint = disjointRanges(sorted); idx.disjoint {
		idx.groups = sorted
	}
	return idx
}

// groupMembers splits the members of one obfuscated name into inline
// groups, in file order.
func groupMembers(members []member) []group {
	var groups []group
	for i := 0; i < len(members); {
		j := i + 1
		for j < len(members) && sameRange(members[i], members[j]) {
			j++
		}
		first := members[i]
		groups = append(groups, group{start: first.start, end: first.end, lo: int32(i), hi: int32(j), hasRange: first.hasRange && first.end > 0})
		i = j
	}
	return groups
}

// compareGroups orders ranged groups first, by start, and keeps the
// unranged ones after them in file order.
func compareGroups(a, b group) int {
	switch {
	case a.hasRange != b.hasRange:
		if a.hasRange {
			return -1
		}
		return 1
	case !a.hasRange:
		return 0
	}
	return int(a.start) - int(b.start)
}

// disjointRanges reports whether the ranged groups of sorted (sorted by
// compareGroups) do not overlap.
func disjointRanges(sorted []group) bool {
	for i := 1; i < len(sorted) && sorted[i].hasRange; i++ {
		if sorted[i].start <= sorted[i-1].end {
			return false
		}
	}
	return true
}

// sameRange reports whether b continues a's inline group.
// R8 writes "0:0:" for inlined code without line numbers: such members
// group too, while members without any range are alternatives.
func sameRange(a, b member) bool {
	return a.hasRange && b.hasRange && a.start == b.start && a.end == b.end
}

// Class returns the original name of an obfuscated class.
func (m *Mapping) Class(obfuscated string) (string, bool) {
	c, ok := m.classes[obfuscated]
	if !ok {
		return "", false
	}
	return c.original, true
}

// Remap de-obfuscates one frame: the obfuscated class, method and line as
// the runtime reports them (line 0, or negative, when unknown). When code was inlined,
// one obfuscated frame becomes several original frames, returned innermost
// first: Frames[0] is the method whose code runs at line, the last frame
// is the method the obfuscated frame belongs to.
//
// Remap returns nil when the class is not in the mapping. A known class
// with a method the mapping does not list (kept or synthetic methods) gives
// one frame with the original class and the method and line unchanged, as
// does a line that falls in no range of a method name shared by several
// original methods (the mapping cannot tell which one ran).
func (m *Mapping) Remap(className, method string, line int) []Frame {
	c, ok := m.classes[className]
	if !ok {
		return nil
	}
	line = max(line, 0) // a negative line is as unknown as 0
	idx := c.groups[method]
	if idx == nil {
		return m.unmapped(c, method, line)
	}
	members := c.methods[method]
	if line > 0 {
		if g, ok := idx.find(int32(line)); ok {
			return m.frames(c, members[g.lo:g.hi], int32(line), g.start)
		}
		if idx.hasRanges() {
			// The mapping describes this method's lines and not this
			// one: as R8's retrace, keep the method and line.
			return m.unmapped(c, method, line)
		}
	}
	return m.remapWithoutLine(c, idx, members, method, line)
}

// unmapped is the frame of a method the mapping cannot name: the original
// class, the method and line as they came.
func (m *Mapping) unmapped(c *class, method string, line int) []Frame {
	return []Frame{{Class: c.original, Method: method, File: m.fileOf(c.original, c), Line: line}}
}

// remapWithoutLine names a method by its name alone (no line, or a method
// without line ranges): its first entry without a minified range ("0:0:"
// inline group or plain member) says which method it is; otherwise the
// inline groups' outermost members do, when they agree.
func (m *Mapping) remapWithoutLine(c *class, idx *methodIndex, members []member, method string, line int) []Frame {
	for _, g := range idx.groups {
		if !g.hasRange {
			return m.frames(c, members[g.lo:g.hi], int32(line), 0)
		}
	}
	outer := members[idx.groups[0].hi-1]
	for _, g := range idx.groups[1:] {
		if o := members[g.hi-1]; o.name != outer.name || o.class != outer.class {
			return m.unmapped(c, method, line)
		}
	}
	return []Frame{{Class: outer.class, Method: outer.name, File: m.fileOf(outer.class, c)}}
}

// hasRanges reports whether the method has minified line ranges at all.
func (idx *methodIndex) hasRanges() bool {
	return slices.ContainsFunc(idx.groups, func(g group) bool { return g.hasRange })
}

// find returns the inline group whose minified range holds line.
func (idx *methodIndex) find(line int32) (group, bool) {
	if !idx.disjoint {
		i := slices.IndexFunc(idx.groups, func(g group) bool { return g.holds(line) })
		if i < 0 {
			return group{}, false
		}
		return idx.groups[i], true
	}
	i, _ := slices.BinarySearchFunc(idx.groups, line, group.compareLine)
	if i < len(idx.groups) && idx.groups[i].holds(line) {
		return idx.groups[i], true
	}
	return group{}, false
}

// holds reports whether the group's minified range holds line.
func (g group) holds(line int32) bool { return g.hasRange && g.start <= line && line <= g.end }

// compareLine orders a group against a line for binary search over
// disjoint ranged groups (unranged ones sort after every line).
func (g group) compareLine(line int32) int {
	switch {
	case !g.hasRange || g.start > line:
		return 1
	case g.end < line:
		return -1
	}
	return 0
}

// frames turns one inline group into frames, innermost first; line is the
// minified line (0 when unknown) and start the group's minified start.
func (m *Mapping) frames(c *class, members []member, line, start int32) []Frame {
	out := make([]Frame, len(members))
	for i, mb := range members {
		out[i] = Frame{Class: mb.class, Method: mb.name, File: m.fileOf(mb.class, c), Line: int(originalLine(mb, line, start))}
	}
	return out
}

// originalLine maps a minified line to the member's original line. A
// single original line (all callers of an inlined body, most R8 ranges)
// is that line (R8's ":0:0": not known); an original range maps line by
// line from the minified range's start, and is not known without one; no
// original line at all (ProGuard without optimisation) means the line was
// not changed.
func originalLine(mb member, line, start int32) int32 {
	switch {
	case !mb.hasOriginal:
		return unchangedLine(mb, line)
	case mb.origEnd == mb.origStart:
		return mb.origStart
	case line == 0 || !mb.hasRange || mb.end == 0:
		return 0 // a range of original lines and no minified line to pick one
	}
	l := mb.origStart + (line - start)
	if l > mb.origEnd && mb.origEnd > mb.origStart {
		l = mb.origEnd
	}
	return l
}

// unchangedLine is the original line of a member that records none: the
// minified line when it has a minified range, unknown otherwise.
func unchangedLine(mb member, line int32) int32 {
	if mb.hasRange && mb.end > 0 {
		return line
	}
	return 0
}

// fileOf returns the source file of an original class: the name R8
// recorded, else the outer class's simple name with the extension of the
// file of the class being remapped (code inlined into a Kotlin class is
// most likely Kotlin), ".java" by default, as retrace tools show it.
func (m *Mapping) fileOf(className string, remapped *class) string {
	if f, ok := m.files[className]; ok {
		return f
	}
	simple := outerSimpleName(className)
	if simple == "" {
		return ""
	}
	return simple + m.sourceExt(remapped)
}

// outerSimpleName is a class's simple name without its inner classes:
// Cart for com.example.Cart$Item.
func outerSimpleName(className string) string {
	simple := className[strings.LastIndexByte(className, '.')+1:]
	if i := strings.IndexByte(simple, '$'); i > 0 {
		simple = simple[:i]
	}
	return simple
}

// sourceExt is the extension of the source file of a class, ".java" when
// the mapping does not name it.
func (m *Mapping) sourceExt(c *class) string {
	f := m.files[c.original]
	if i := strings.LastIndexByte(f, '.'); i > 0 {
		return f[i:]
	}
	return ".java"
}

// SkippedLines returns the number of class or member lines Parse could
// not read and ignored.
func (m *Mapping) SkippedLines() int { return m.skipped }

// Size returns an estimate of the memory the mapping holds, in bytes, for
// caches bounded in bytes: the distinct strings, the member and index
// records, and the maps (as Go lays them out: slot groups of eight).
func (m *Mapping) Size() int64 {
	const ptr, str, slice = 8, 16, 24
	size := int64(unsafe.Sizeof(*m)) + m.stringBytes
	size += mapBytes(len(m.classes), str+ptr) + mapBytes(len(m.files), 2*str)
	for _, c := range m.classes {
		size += int64(unsafe.Sizeof(*c))
		size += mapBytes(len(c.methods), str+slice) + mapBytes(len(c.groups), str+ptr)
		for obf, members := range c.methods {
			idx := c.groups[obf]
			size += int64(cap(members)) * int64(unsafe.Sizeof(member{}))
			size += int64(unsafe.Sizeof(*idx)) + int64(cap(idx.groups))*int64(unsafe.Sizeof(group{}))
			for _, mb := range members {
				if mb.outlineCallsite != nil {
					size += mapBytes(len(mb.outlineCallsite), 8)
				}
			}
		}
	}
	return size
}

// mapBytes estimates a Go map of n entries of entryBytes each: slots in
// groups of eight with a control word, filled to at most 7/8, plus the
// map header.
func mapBytes(n, entryBytes int) int64 {
	const header, groupSlots = 48, 8
	slots := max(groupSlots, (n*8+6)/7)
	groups := (slots + groupSlots - 1) / groupSlots
	return int64(header + groups*(8+groupSlots*entryBytes))
}

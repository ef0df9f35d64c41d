package native

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// dwarfTables is what resolving an address needs from DWARF, flattened
// once at load: the line table rows of every unit, and every function with
// code (subprograms) with the inlined calls inside it.
type dwarfTables struct {
	rows  []lineRow    // by address; an end-of-sequence row has file endOfSequence
	subs  []subprogram // one per address range, by lo
	inl   []inlineNode // inlined calls, one per DIE
	segs  []inlineSeg  // by lo, disjoint: where each inlined call is the innermost
	names []string     // function names, demangled
	files []string     // source paths
}

const endOfSequence = math.MaxUint32

// attrMIPSLinkageName is the pre-DWARF 4 linkage name attribute that GCC
// still writes with -gdwarf-2/3.
const attrMIPSLinkageName dwarf.Attr = 0x2007

type lineRow struct {
	addr       uint64
	file, line uint32
}

// subprogram is one address range of a function.
type subprogram struct {
	lo, hi uint64
	name   uint32
}

// inlineNode is an inlined call: the code of function name, called from
// callFile:callLine of parent (an index in inl), or of the subprogram when
// parent is -1.
type inlineNode struct {
	parent             int32
	name               uint32
	callFile, callLine uint32
}

// inlineSeg is an address range whose innermost inlined call is node.
type inlineSeg struct {
	lo, hi uint64
	node   uint32
}

// inlineRange is one address range of an inlined call while loading.
type inlineRange struct {
	lo, hi uint64
	node   uint32
	depth  uint32
}

// nameRefs holds what names a subprogram DIE, to resolve abstract origins
// and specifications once all units are read.
type nameRefs struct {
	name, linkage string
	ref           dwarf.Offset // abstract origin or specification, 0 if none
}

// dwarfLoader accumulates the tables while walking the units.
type dwarfLoader struct {
	d       *dwarf.Data
	t       *dwarfTables
	fileIdx map[string]uint32
	refs    map[dwarf.Offset]nameRefs
	// pending names: index into names that still holds a DIE offset.
	pendingSub []dwarf.Offset // per subs entry
	pendingInl []dwarf.Offset // per inl entry
	seqs       [][]lineRow    // line sequences, each ending in an endOfSequence row
	inlRanges  []inlineRange
	demangled  map[string]string
	// budget bounds the entries and ranges read: a DIE takes at least one
	// byte of .debug_info, so more entries than bytes means the reader is
	// going round in circles on malformed data.
	budget int
}

var errDWARFBudget = errors.New("dwarf: more entries than .debug_info has bytes (malformed)")

func (l *dwarfLoader) spend(n int) error {
	if l.budget -= n; l.budget < 0 {
		return errDWARFBudget
	}
	return nil
}

// next reads one entry, within the budget.
func (l *dwarfLoader) next(r *dwarf.Reader) (*dwarf.Entry, error) {
	if err := l.spend(1); err != nil {
		return nil, err
	}
	e, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("dwarf: reading entries: %w", err)
	}
	return e, nil
}

// loadDWARF flattens d, whose .debug_info is infoBytes long. Malformed
// data is an error; a panic of debug/dwarf on hostile input is turned into
// one by the caller.
func loadDWARF(d *dwarf.Data, infoBytes uint64) (*dwarfTables, error) {
	l := &dwarfLoader{d: d, t: &dwarfTables{}, fileIdx: map[string]uint32{}, refs: map[dwarf.Offset]nameRefs{}, demangled: map[string]string{},
		budget: int(min(infoBytes, 1<<40)) + 1024}
	r := d.Reader()
	for {
		cu, err := l.next(r)
		if err != nil {
			return nil, err
		}
		if cu == nil {
			break
		}
		if err := l.unit(r, cu); err != nil {
			return nil, err
		}
	}
	l.finish()
	return l.t, nil
}

// unit reads one unit: its line table when it is a compile or partial
// unit, and its DIE tree.
func (l *dwarfLoader) unit(r *dwarf.Reader, cu *dwarf.Entry) error {
	var files []uint32
	if cu.Tag == dwarf.TagCompileUnit || cu.Tag == dwarf.TagPartialUnit {
		var err error
		if files, err = l.readLines(cu); err != nil {
			return err
		}
	}
	// Other units (type units) are walked too, without SkipChildren,
	// whose sibling jumps can cycle on malformed data; they hold no
	// code, so they add nothing.
	if !cu.Children {
		return nil
	}
	return l.walkUnit(r, files)
}

// readLines appends the unit's line rows and returns its file table, as
// global file indexes, for DW_AT_call_file.
func (l *dwarfLoader) readLines(cu *dwarf.Entry) ([]uint32, error) {
	lr, err := l.d.LineReader(cu)
	if err != nil {
		return nil, fmt.Errorf("dwarf: line table at %#x: %w", cu.Offset, err)
	}
	if lr == nil {
		return nil, nil
	}
	if err := l.readRows(lr); err != nil {
		return nil, fmt.Errorf("dwarf: line table at %#x: %w", cu.Offset, err)
	}
	files := lr.Files()
	out := make([]uint32, len(files))
	for i, f := range files {
		out[i] = l.file(f)
	}
	return out, nil
}

// readRows appends the rows of a line table, sequence by sequence.
func (l *dwarfLoader) readRows(lr *dwarf.LineReader) error {
	var e dwarf.LineEntry
	var seq []lineRow
	for {
		err := lr.Next(&e)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case e.EndSequence:
			l.addSequence(append(seq, lineRow{addr: e.Address, file: endOfSequence}))
			seq = nil
		default:
			seq = append(seq, lineRow{addr: e.Address, file: l.file(e.File), line: uint32(max(e.Line, 0))})
		}
	}
}

// addSequence keeps one line sequence. Sequences of code the linker
// discarded start at a tombstone address (0, or -1 and -2 with lld) and
// would shadow real code: they are dropped.
func (l *dwarfLoader) addSequence(seq []lineRow) {
	if start := seq[0].addr; start == 0 || start >= math.MaxUint64-1 {
		return
	}
	l.seqs = append(l.seqs, seq)
}

func (l *dwarfLoader) file(f *dwarf.LineFile) uint32 {
	name := ""
	if f != nil {
		name = f.Name
	}
	if i, ok := l.fileIdx[name]; ok {
		return i
	}
	i := uint32(len(l.t.files))
	l.t.files = append(l.t.files, name)
	l.fileIdx[name] = i
	return i
}

// scope is a function DIE whose children are being walked.
type scope struct {
	level int   // tree level of the DIE itself
	node  int32 // its inlined call in inl, -1 for the subprogram itself
	depth uint32
}

// walkUnit reads one unit's DIE tree: every subprogram with code becomes a
// subprogram, every inlined subroutine inside one an inlineNode.
func (l *dwarfLoader) walkUnit(r *dwarf.Reader, files []uint32) error {
	w := unitWalk{level: 1}
	for w.level > 0 {
		e, err := l.next(r)
		if err != nil || e == nil {
			return err
		}
		if err := w.step(l, e, files); err != nil {
			return err
		}
	}
	return nil
}

// unitWalk is where the walk of a DIE tree is: its depth, and the
// function scopes open there.
type unitWalk struct {
	level int
	stack []scope
}

// step records one entry and moves down into its children or, at the
// null entry that ends them, back up.
func (w *unitWalk) step(l *dwarfLoader, e *dwarf.Entry, files []uint32) error {
	if e.Tag == 0 {
		w.level--
		w.stack = popScopes(w.stack, w.level)
		return nil
	}
	pushed, err := l.entry(e, w.level, &w.stack, files)
	switch {
	case err != nil:
		return err
	case e.Children:
		w.level++
	case pushed:
		w.stack = w.stack[:len(w.stack)-1]
	}
	return nil
}

// popScopes drops the scopes at level or deeper: their DIEs' children
// have ended.
func popScopes(stack []scope, level int) []scope {
	for len(stack) > 0 && stack[len(stack)-1].level >= level {
		stack = stack[:len(stack)-1]
	}
	return stack
}

// entry records one DIE and reports whether it pushed a scope.
func (l *dwarfLoader) entry(e *dwarf.Entry, level int, stack *[]scope, files []uint32) (bool, error) {
	switch e.Tag {
	case dwarf.TagSubprogram:
		l.recordNames(e)
		return l.subprogram(e, level, stack)
	case dwarf.TagInlinedSubroutine:
		if len(*stack) == 0 {
			return false, nil // not inside a function with code
		}
		return l.inlined(e, level, stack, files)
	}
	return false, nil
}

// codeRanges are the address ranges of a DIE, within the budget; none for
// a declaration or an abstract instance.
func (l *dwarfLoader) codeRanges(e *dwarf.Entry) ([][2]uint64, error) {
	ranges, err := l.d.Ranges(e)
	if err != nil || len(ranges) == 0 {
		return nil, nil //nolint:nilerr // a DIE without readable ranges has no code
	}
	return ranges, l.spend(len(ranges))
}

// subprogram records a function with code: one subprogram per range.
func (l *dwarfLoader) subprogram(e *dwarf.Entry, level int, stack *[]scope) (bool, error) {
	ranges, err := l.codeRanges(e)
	if err != nil || len(ranges) == 0 {
		return false, err
	}
	sub := len(l.pendingSub)
	l.pendingSub = append(l.pendingSub, e.Offset)
	for _, rg := range ranges {
		l.t.subs = append(l.t.subs, subprogram{lo: rg[0], hi: rg[1], name: uint32(sub)})
	}
	*stack = append(*stack, scope{level: level, node: -1})
	return true, nil
}

// inlined records an inlined call inside the innermost scope of stack.
func (l *dwarfLoader) inlined(e *dwarf.Entry, level int, stack *[]scope, files []uint32) (bool, error) {
	ranges, err := l.codeRanges(e)
	if err != nil || len(ranges) == 0 {
		return false, err
	}
	parent := (*stack)[len(*stack)-1]
	origin, _ := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	idx := uint32(len(l.t.inl))
	l.t.inl = append(l.t.inl, callSite(e, parent.node, files))
	l.pendingInl = append(l.pendingInl, origin)
	for _, rg := range ranges {
		l.inlRanges = append(l.inlRanges, inlineRange{lo: rg[0], hi: rg[1], node: idx, depth: parent.depth + 1})
	}
	*stack = append(*stack, scope{level: level, node: int32(idx), depth: parent.depth + 1})
	return true, nil
}

// callSite is the inlined call of DIE e: where in its caller (parent) it
// was called from.
func callSite(e *dwarf.Entry, parent int32, files []uint32) inlineNode {
	callFile, _ := e.Val(dwarf.AttrCallFile).(int64)
	callLine, _ := e.Val(dwarf.AttrCallLine).(int64)
	node := inlineNode{parent: parent, callLine: uint32(max(min(callLine, math.MaxUint32), 0)), callFile: endOfSequence}
	if callFile >= 0 && callFile < int64(len(files)) {
		node.callFile = files[callFile]
	}
	return node
}

func (l *dwarfLoader) recordNames(e *dwarf.Entry) {
	var n nameRefs
	n.name, _ = e.Val(dwarf.AttrName).(string)
	n.linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
	if n.linkage == "" {
		n.linkage, _ = e.Val(attrMIPSLinkageName).(string)
	}
	if ref, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
		n.ref = ref
	} else if ref, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
		n.ref = ref
	}
	l.refs[e.Offset] = n
}

// finish resolves the names, ties each subprogram to its inlined calls and
// sorts the tables for binary search.
func (l *dwarfLoader) finish() {
	t := l.t
	l.internNames()
	t.segs = innermostSegments(l.inlRanges)
	t.rows = mergeSequences(l.seqs)
	slices.SortStableFunc(t.subs, func(a, b subprogram) int { return cmpUint64(a.lo, b.lo) })
	t.rows, t.subs, t.inl = slices.Clip(t.rows), slices.Clip(t.subs), slices.Clip(t.inl)
	l.inlRanges = nil
	l.refs, l.pendingSub, l.pendingInl, l.seqs, l.demangled = nil, nil, nil, nil, nil
}

// internNames gives every subprogram and inlined call its resolved name,
// each distinct name stored once.
func (l *dwarfLoader) internNames() {
	t := l.t
	nameIdx := map[string]uint32{}
	intern := func(off dwarf.Offset) uint32 {
		name := l.resolveName(off)
		if i, ok := nameIdx[name]; ok {
			return i
		}
		i := uint32(len(t.names))
		t.names = append(t.names, name)
		nameIdx[name] = i
		return i
	}
	subName := make([]uint32, len(l.pendingSub))
	for i, off := range l.pendingSub {
		subName[i] = intern(off)
	}
	for i := range t.subs {
		t.subs[i].name = subName[t.subs[i].name]
	}
	for i := range t.inl {
		t.inl[i].name = intern(l.pendingInl[i])
	}
}

// mergeSequences joins the line sequences in address order, each with its
// rows in its own order: an end of sequence comes after the rows at its
// address (they cover nothing) and before a sequence that starts there.
func mergeSequences(seqs [][]lineRow) []lineRow {
	slices.SortStableFunc(seqs, func(a, b []lineRow) int { return cmpUint64(a[0].addr, b[0].addr) })
	n := 0
	for _, seq := range seqs {
		n += len(seq)
	}
	rows := make([]lineRow, 0, n)
	for _, seq := range seqs {
		rows = append(rows, seq...)
	}
	byAddr := func(a, b lineRow) int { return cmpUint64(a.addr, b.addr) }
	if !slices.IsSortedFunc(rows, byAddr) {
		// Overlapping sequences (malformed or unusual data): an order
		// binary search can use, at the cost of some exactness.
		slices.SortStableFunc(rows, byAddr)
	}
	return rows
}

// resolveName follows abstract origins and specifications (at most a few
// hops: a cycle in hostile data must end) to the function's linkage name,
// demangled, or else its plain name.
func (l *dwarfLoader) resolveName(off dwarf.Offset) string {
	plain := ""
	for hop := 0; hop < 8 && off != 0; hop++ {
		n, ok := l.refs[off]
		if !ok {
			break
		}
		if n.linkage != "" {
			return l.demangle(n.linkage)
		}
		if plain == "" {
			plain = n.name
		}
		off = n.ref
	}
	return plain
}

// demangle demangles a linkage name once per load.
func (l *dwarfLoader) demangle(linkage string) string {
	if d, ok := l.demangled[linkage]; ok {
		return d
	}
	d := demangleName(linkage)
	l.demangled[linkage] = d
	return d
}

// line returns the source position of the row covering addr; "" and 0
// when no row covers it.
func (t *dwarfTables) line(addr uint64) (file string, line int) {
	i, ok := t.rowAt(addr)
	if !ok || t.rows[i].file == endOfSequence {
		return "", 0
	}
	r := t.rows[i]
	return t.files[r.file], int(r.line)
}

// rowAt is the index of the last row at or before addr.
func (t *dwarfTables) rowAt(addr uint64) (int, bool) {
	i, found := slices.BinarySearchFunc(t.rows, addr, func(r lineRow, a uint64) int { return cmpUint64(r.addr, a) })
	if !found {
		return i - 1, i > 0
	}
	for i+1 < len(t.rows) && t.rows[i+1].addr == addr {
		i++
	}
	return i, true
}

// function returns the subprogram whose range holds addr. Ranges of
// nested or duplicate subprograms can overlap: the closest start wins.
func (t *dwarfTables) function(addr uint64) (subprogram, bool) {
	i, _ := slices.BinarySearchFunc(t.subs, addr+1, func(s subprogram, a uint64) int { return cmpUint64(s.lo, a) })
	for j := i - 1; j >= 0 && j >= i-16; j-- {
		if s := t.subs[j]; s.lo <= addr && addr < s.hi {
			return s, true
		}
	}
	return subprogram{}, false
}

// frames returns the frames at addr, innermost first: the inlined calls
// that hold addr, then the subprogram. The innermost frame's position is
// the line table's; each caller's is the call site its callee records.
func (t *dwarfTables) frames(addr uint64) []Frame {
	sub, ok := t.function(addr)
	if !ok {
		return nil
	}
	file, line := t.line(addr)
	node := t.innermostCall(addr)
	depth := t.callDepth(node)
	out := make([]Frame, 0, depth+1)
	for hops := 0; node >= 0 && hops < depth; hops++ {
		n := t.inl[node]
		out = append(out, Frame{Function: t.names[n.name], File: file, Line: line, Inlined: true})
		file, line = t.fileName(n.callFile), int(n.callLine)
		node = n.parent
	}
	return append(out, Frame{Function: t.names[sub.name], File: file, Line: line})
}

// innermostCall is the deepest inlined call holding addr, -1 for none.
func (t *dwarfTables) innermostCall(addr uint64) int32 {
	i, _ := slices.BinarySearchFunc(t.segs, addr+1, func(s inlineSeg, a uint64) int { return cmpUint64(s.lo, a) })
	if i > 0 && t.segs[i-1].lo <= addr && addr < t.segs[i-1].hi {
		return int32(t.segs[i-1].node)
	}
	return -1
}

// callDepth is the number of inlined calls from node out, bounded by the
// table's size (a cycle in hostile data must end).
func (t *dwarfTables) callDepth(node int32) int {
	depth := 0
	for n := node; n >= 0 && depth < len(t.inl); n = t.inl[n].parent {
		depth++
	}
	return depth
}

// innermostSegments turns the (nested) address ranges of inlined calls
// into disjoint segments, each naming the deepest call that holds it.
// Ranges are swept by start, outer before inner, with a stack of the open
// ones; a range that pokes out of its enclosing one (malformed data) is
// clipped to it.
func innermostSegments(ranges []inlineRange) []inlineSeg {
	slices.SortStableFunc(ranges, func(a, b inlineRange) int {
		if c := cmpUint64(a.lo, b.lo); c != 0 {
			return c
		}
		return int(a.depth) - int(b.depth)
	})
	var sw segmentSweep
	for _, r := range ranges {
		if r.hi > r.lo {
			sw.open(r)
		}
	}
	sw.closeUntil(math.MaxUint64)
	return slices.Clip(sw.segs)
}

// segmentSweep is the state of innermostSegments: the segments so far,
// the ranges open at the sweep's address and how far segments reach.
type segmentSweep struct {
	segs  []inlineSeg
	stack []inlineRange
	cur   uint64
}

func (sw *segmentSweep) emit(lo, hi uint64, node uint32) {
	if lo < hi {
		sw.segs = append(sw.segs, inlineSeg{lo: lo, hi: hi, node: node})
	}
}

// closeUntil closes the open ranges that end at or before addr.
func (sw *segmentSweep) closeUntil(addr uint64) {
	for len(sw.stack) > 0 && sw.stack[len(sw.stack)-1].hi <= addr {
		top := sw.stack[len(sw.stack)-1]
		sw.emit(max(sw.cur, top.lo), top.hi, top.node)
		sw.cur = max(sw.cur, top.hi)
		sw.stack = sw.stack[:len(sw.stack)-1]
	}
}

// open starts range r: the enclosing range's segment ends at its start.
func (sw *segmentSweep) open(r inlineRange) {
	sw.closeUntil(r.lo)
	if len(sw.stack) > 0 {
		top := sw.stack[len(sw.stack)-1]
		sw.emit(max(sw.cur, top.lo), r.lo, top.node)
		r.hi = min(r.hi, top.hi)
	}
	sw.cur = max(sw.cur, r.lo)
	sw.stack = append(sw.stack, r)
}

func (t *dwarfTables) fileName(i uint32) string {
	if int(i) < len(t.files) {
		return t.files[i]
	}
	return ""
}

// bytes estimates the memory the tables hold.
func (t *dwarfTables) bytes() int64 {
	n := int64(cap(t.rows))*16 + int64(cap(t.subs))*24 + int64(cap(t.inl))*16 + int64(cap(t.segs))*24
	for _, s := range t.names {
		n += 16 + int64(len(s))
	}
	for _, s := range t.files {
		n += 16 + int64(len(s))
	}
	return n
}

package jsscope

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"
)

// Component is one piece of a scope's name: a name token of the minified
// source (HasPos, at Pos) that a source map can turn into the original
// identifier, or text the naming adds ("new ", ".", "get ", "<object>.").
type Component struct {
	Text   string
	Pos    Position
	HasPos bool
	// Hidden marks the binding a function's or class's own name replaces
	// (x of `x = function y(){}`): it is not written, unless y maps to
	// the same original identifier, when its name stands for y's.
	Hidden bool
}

// Scope is a function, arrow, method, getter, setter or class of the
// minified source: from Start (inclusive) to End (exclusive), named by
// Name, empty for an anonymous scope (a callback nothing names).
type Scope struct {
	Start, End Position
	Name       []Component
}

// Anonymous reports whether nothing names the scope.
func (s Scope) Anonymous() bool { return len(s.Name) == 0 }

// Index is the scopes of one minified source, searchable by position. It
// holds no reference to the source.
type Index struct {
	scopes []scopeRec
	nodes  []nameNode
	comps  []Component
	// bounds are the positions where the innermost scope changes, sorted:
	// from bounds[i].at to bounds[i+1].at the innermost scope is
	// bounds[i].scope, -1 outside every scope.
	bounds []bound
	size   int64
}

type bound struct {
	at    Position
	scope int32
}

// Parse scans a minified (or any) JavaScript source into its scopes. It
// works in time and memory linear in len(src). A source it cannot follow
// (unbalanced brackets, an unterminated literal or comment, scopes that do
// not nest) returns an error and no index: the caller then names frames
// as it would without one.
func Parse(src []byte) (*Index, error) {
	toks, end, err := lex(src)
	if err != nil {
		return nil, err
	}
	w := &walker{src: src, toks: toks, end: end}
	if err := w.walk(); err != nil {
		return nil, err
	}
	x := &Index{scopes: w.scopes, nodes: w.nodes, comps: w.comps}
	if err := x.buildBounds(); err != nil {
		return nil, err
	}
	x.size = x.bytes()
	return x, nil
}

// buildBounds sorts the scopes by start (outer first) and turns their
// nesting into the bounds.
func (x *Index) buildBounds() error {
	x.bounds = make([]bound, 0, 2*len(x.scopes)+1)
	var open []int32
	for _, s := range x.byStart() {
		sc := &x.scopes[s]
		open = x.unwind(open, sc.start)
		if n := len(open); n > 0 && x.scopes[open[n-1]].end.Less(sc.end) {
			return fmt.Errorf("%w: scopes at %v and %v overlap", errSyntax, x.scopes[open[n-1]].start, sc.start)
		}
		open = append(open, s)
		x.push(sc.start, open)
	}
	x.unwind(open, Position{Line: 1<<31 - 1})
	return nil
}

// byStart returns the scopes' indices by start, the longer first.
func (x *Index) byStart() []int32 {
	order := make([]int32, len(x.scopes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		sa, sb := &x.scopes[a], &x.scopes[b]
		return cmp.Or(comparePos(sa.start, sb.start), comparePos(sb.end, sa.end))
	})
	return order
}

// unwind closes the open scopes that end at or before to, recording
// where each ends.
func (x *Index) unwind(open []int32, to Position) []int32 {
	for len(open) > 0 && !to.Less(x.scopes[open[len(open)-1]].end) {
		ended := x.scopes[open[len(open)-1]].end
		open = open[:len(open)-1]
		x.push(ended, open)
	}
	return open
}

// push records that from at the innermost scope is the top of open; a
// bound at the same position as the last replaces it.
func (x *Index) push(at Position, open []int32) {
	scope := int32(-1)
	if len(open) > 0 {
		scope = open[len(open)-1]
	}
	if n := len(x.bounds); n > 0 && x.bounds[n-1].at == at {
		x.bounds[n-1].scope = scope
		return
	}
	x.bounds = append(x.bounds, bound{at: at, scope: scope})
}

func comparePos(a, b Position) int {
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
}

// Lookup returns the innermost scope enclosing the generated position
// (line and column 0-based, the column in UTF-16 units); false when the
// position is outside every function (top-level code).
func (x *Index) Lookup(line, column int) (Scope, bool) {
	if x == nil {
		return Scope{}, false
	}
	at := Position{Line: clamp32(line), Column: clamp32(column)}
	i, found := slices.BinarySearchFunc(x.bounds, at, func(b bound, p Position) int { return comparePos(b.at, p) })
	if !found {
		i--
	}
	if i < 0 || x.bounds[i].scope < 0 {
		return Scope{}, false
	}
	sc := &x.scopes[x.bounds[i].scope]
	return Scope{Start: sc.start, End: sc.end, Name: x.name(sc)}, true
}

// name writes a scope's name: its prefixes, then its parts from the
// outermost (at most maxNameParts of them) joined by dots.
func (x *Index) name(sc *scopeRec) []Component {
	parts := x.parts(sc)
	if len(parts) == 0 {
		return nil
	}
	name := prefixComponents(sc.prefix)
	for i := len(parts) - 1; i >= 0; i-- {
		name = append(name, parts[i]...)
		if i > 0 {
			name = append(name, interp("."))
		}
	}
	return name
}

// parts returns a scope's name parts, the innermost first.
func (x *Index) parts(sc *scopeRec) [][]Component {
	var parts [][]Component
	if sc.ownLen > 0 {
		parts = append(parts, x.comps[sc.own:sc.own+sc.ownLen])
	}
	for n := sc.outer; n >= 0 && len(parts) < maxNameParts; n = x.nodes[n].next {
		node := x.nodes[n]
		parts = append(parts, x.comps[node.first:node.first+node.n])
	}
	return parts
}

// prefixComponents writes a name's prefixes in their order.
func prefixComponents(p prefix) []Component {
	texts := [...]struct {
		flag prefix
		text string
	}{{prefixGet, "get "}, {prefixSet, "set "}, {prefixNew, "new "}, {prefixObject, "<object>."}}
	var c []Component
	for _, t := range texts {
		if p&t.flag != 0 {
			c = append(c, interp(t.text))
		}
	}
	return c
}

func clamp32(v int) int32 {
	return int32(max(-1, min(v, 1<<31-1)))
}

// Len is the number of scopes.
func (x *Index) Len() int { return len(x.scopes) }

// Size is the memory the index holds, in bytes, for a cache bounded in
// bytes.
func (x *Index) Size() int64 { return x.size }

func (x *Index) bytes() int64 {
	n := int64(len(x.scopes))*int64(unsafe.Sizeof(scopeRec{})) +
		int64(len(x.nodes))*int64(unsafe.Sizeof(nameNode{})) +
		int64(len(x.comps))*int64(unsafe.Sizeof(Component{})) +
		int64(len(x.bounds))*int64(unsafe.Sizeof(bound{}))
	for _, c := range x.comps {
		n += int64(len(c.Text))
	}
	return n
}

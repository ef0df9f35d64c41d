package jsscope

import (
	"strconv"
	"strings"
)

// Mapping is what a source map says of a generated position: the segment
// at or before it on its line.
type Mapping struct {
	// GenLine and GenColumn are the segment's generated position
	// (0-based, UTF-16 columns).
	GenLine, GenColumn int
	// Source, Line and Column are its original position; HasSource is
	// false for a segment that maps to no source.
	Source       string
	Line, Column int
	HasSource    bool
	// Name is the original identifier, empty when the segment has none.
	Name string
}

// MapLookup returns the segment at or before a generated position on the
// same line, false when the line has none there. symbolication/sourcemap's
// Map.At is one, wrapped to return a Mapping.
type MapLookup func(line, column int) (Mapping, bool)

// ResolveName writes a scope's name with each name token turned into its
// original identifier: the source map's name of the segment at the token
// (or one column before it), or of the segment just before that maps to
// the same original position (some generators name the `function` keyword,
// not the identifier after it). A token the map names nothing for keeps
// its minified text: a property name the minifier kept is its original
// name.
//
// Two tokens that map to the same original identifier are one name that
// the bundler wrote twice (esbuild's `var Cart = class _Cart {…}` for a
// class that refers to itself): a binding and the class's own name are
// written once, with the binding's name, which is the source's.
func ResolveName(name []Component, lookup MapLookup) string {
	res := make([]resolved, len(name))
	for i, c := range name {
		res[i] = resolveComponent(c, lookup)
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch {
		case name[i].Hidden:
			lendName(res, i)
		case repeatsName(name, res, i):
			i++ // the separator and the name it repeats
		default:
			b.WriteString(res[i].text)
		}
	}
	return b.String()
}

// lendName gives a hidden binding's name to the name token after it when
// both are one original identifier.
func lendName(res []resolved, i int) {
	if i+1 < len(res) && res[i].sameOrigin(res[i+1]) {
		res[i+1].text = res[i].text
	}
}

// repeatsName reports whether name[i] is a separator between two tokens
// of one original identifier.
func repeatsName(name []Component, res []resolved, i int) bool {
	return isSeparator(name[i]) && i > 0 && i+1 < len(name) && res[i-1].sameOrigin(res[i+1])
}

func isSeparator(c Component) bool { return c.Text == "." && !c.HasPos }

// resolved is a component's text and, when a segment with a source named
// it, that segment's original position.
type resolved struct {
	text   string
	origin origin
	mapped bool
}

// origin is a segment's original position.
type origin struct {
	source       string
	line, column int
	hasSource    bool
}

func originOf(m Mapping) origin { return origin{m.Source, m.Line, m.Column, m.HasSource} }

func (r resolved) sameOrigin(o resolved) bool {
	return r.mapped && o.mapped && r.origin == o.origin
}

func namedBy(m Mapping) resolved {
	return resolved{text: m.Name, origin: originOf(m), mapped: m.HasSource}
}

func resolveComponent(c Component, lookup MapLookup) resolved {
	if !c.HasPos || lookup == nil {
		return resolved{text: c.Text}
	}
	m, ok := mappingAt(c.Pos, lookup)
	switch {
	case !ok:
		return resolved{text: c.Text}
	case m.Name != "":
		return namedBy(m)
	}
	if prev, ok := namedBefore(m, lookup); ok {
		return namedBy(prev)
	}
	return resolved{text: c.Text}
}

// mappingAt returns the segment at a name token: at its position or one
// column before it, on its line.
func mappingAt(pos Position, lookup MapLookup) (Mapping, bool) {
	line, col := int(pos.Line), int(pos.Column)
	m, ok := lookup(line, col)
	return m, ok && m.GenLine == line && m.GenColumn >= col-1
}

// namedBefore returns the segment just before m when it names m's
// original position.
func namedBefore(m Mapping, lookup MapLookup) (Mapping, bool) {
	if m.GenColumn == 0 {
		return Mapping{}, false
	}
	prev, ok := lookup(m.GenLine, m.GenColumn-1)
	return prev, ok && prev.Name != "" && originOf(prev) == originOf(m)
}

// Anonymous is the function name of a frame whose enclosing scope nothing
// names (a callback passed inline), as Sentry writes it.
const Anonymous = "<anonymous>"

// FunctionName names the function of a frame at a generated position
// (0-based line, UTF-16 column) the way Sentry's Symbolicator does: the
// innermost scope enclosing the position, its name tokens resolved
// through the source map, runs of one component folded (FoldName);
// Anonymous when that scope has no
// name. false when no function encloses the position (top-level code):
// the caller then keeps the frame's own name.
//
// A name Dart's compiler generated for an async body ($async$…) is
// replaced by the map's name of the frame's own position, as Sentry does.
func FunctionName(x *Index, line, column int, lookup MapLookup) (string, bool) {
	scope, ok := x.Lookup(line, column)
	switch {
	case !ok:
		return "", false
	case scope.Anonymous():
		return Anonymous, true
	}
	name := ResolveName(scope.Name, lookup)
	if strings.HasPrefix(name, "$async$") {
		name = dartAsyncName(name, line, column, lookup)
	}
	return FoldName(name), true
}

// dartAsyncName is the map's name at the frame itself, for a body Dart's
// compiler generated for an async function.
func dartAsyncName(name string, line, column int, lookup MapLookup) string {
	if lookup == nil {
		return name
	}
	if m, ok := lookup(line, column); ok && m.Name != "" {
		return m.Name
	}
	return name
}

// FoldName folds runs of the same component in a dotted name, except the
// last component, into {component#count}, as Sentry shows deeply nested
// object names: bar.foo.foo.foo.onError is bar.{foo#3}.onError.
func FoldName(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) < 3 {
		return name
	}
	last := len(parts) - 1
	folded := make([]string, 0, last+1)
	for i := 0; i < last; {
		n := runLength(parts[:last], i)
		folded = append(folded, foldRun(parts[i], n))
		i += n
	}
	return strings.Join(append(folded, parts[last]), ".")
}

// runLength counts the parts equal to parts[i] from i on.
func runLength(parts []string, i int) int {
	n := 1
	for i+n < len(parts) && parts[i+n] == parts[i] {
		n++
	}
	return n
}

func foldRun(part string, n int) string {
	if n == 1 {
		return part
	}
	return "{" + part + "#" + strconv.Itoa(n) + "}"
}

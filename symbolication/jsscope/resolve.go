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
			if i+1 < len(name) && res[i].sameOrigin(res[i+1]) {
				res[i+1].text = res[i].text
			}
		case name[i].Text == "." && !name[i].HasPos && i > 0 && i+1 < len(name) && res[i-1].sameOrigin(res[i+1]):
			i++
		default:
			b.WriteString(res[i].text)
		}
	}
	return b.String()
}

// resolved is a component's text, and the original position of the
// segment whose name it is when a segment named it.
type resolved struct {
	text   string
	origin Mapping
	mapped bool
}

func (r resolved) sameOrigin(o resolved) bool {
	return r.mapped && o.mapped && r.origin.HasSource && o.origin.HasSource &&
		r.origin.Source == o.origin.Source && r.origin.Line == o.origin.Line && r.origin.Column == o.origin.Column
}

func resolveComponent(c Component, lookup MapLookup) resolved {
	unmapped := resolved{text: c.Text}
	if !c.HasPos || lookup == nil {
		return unmapped
	}
	line, col := int(c.Pos.Line), int(c.Pos.Column)
	m, ok := lookup(line, col)
	if !ok || m.GenLine != line || m.GenColumn < col-1 {
		return unmapped
	}
	if m.Name != "" {
		return resolved{text: m.Name, origin: m, mapped: true}
	}
	if m.GenColumn == 0 {
		return unmapped
	}
	prev, ok := lookup(m.GenLine, m.GenColumn-1)
	if ok && prev.Name != "" && prev.Source == m.Source && prev.Line == m.Line && prev.Column == m.Column && prev.HasSource == m.HasSource {
		return resolved{text: prev.Name, origin: prev, mapped: true}
	}
	return unmapped
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
	if !ok {
		return "", false
	}
	if scope.Anonymous() {
		return Anonymous, true
	}
	name := ResolveName(scope.Name, lookup)
	if strings.HasPrefix(name, "$async$") && lookup != nil {
		if m, ok := lookup(line, column); ok && m.Name != "" {
			name = m.Name
		}
	}
	return FoldName(name), true
}

// FoldName folds runs of the same component in a dotted name, except the
// last component, into {component#count}, as Sentry shows deeply nested
// object names: bar.foo.foo.foo.onError is bar.{foo#3}.onError.
func FoldName(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) < 3 {
		return name
	}
	last := parts[len(parts)-1]
	var b strings.Builder
	for i := 0; i < len(parts)-1; {
		j := i + 1
		for j < len(parts)-1 && parts[j] == parts[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if j-i == 1 {
			b.WriteString(parts[i])
		} else {
			b.WriteString("{" + parts[i] + "#" + strconv.Itoa(j-i) + "}")
		}
		i = j
	}
	b.WriteByte('.')
	b.WriteString(last)
	return b.String()
}

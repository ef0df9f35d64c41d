package jsscope

import "strings"

// A scope's name is read from where it stands, walking the open frames
// outwards as Sentry's scope naming walks a syntax tree's ancestors: an
// object key or a class name adds a part and goes on; a variable or an
// assignment target adds one and ends the name; a function boundary (a
// body, parameters, an open arrow) ends it too. What the frames from one
// frame outwards add is the same for every scope inside that frame until
// the frame itself changes (its element's binding, its open arrows), so
// each frame remembers it: naming a scope is constant work at any depth,
// and the parts are stored once, shared by every scope they name.

// nameNode is one part of a name (a key, a binding target, a class name),
// comps[first:first+n], and the part outside it, -1 for none.
type nameNode struct {
	first, n, next int32
}

// context is what the frames from one frame outwards add to a name: its
// innermost part (-1 for none); whether the name ends open (at a function
// boundary or the top level, where a name found inside an object literal
// is written <object>.…); whether an object literal is among the frames.
type context struct {
	node         int32
	open, object bool
}

var rootContext = context{node: -1, open: true}

// context returns the context of frame d, computing it for the frames
// whose remembered one is out of date, from the outermost of them in.
func (w *walker) context(d int) context {
	j := d
	for j >= 0 && !w.frames[j].ctxValid {
		j--
	}
	for k := j + 1; k <= d; k++ {
		w.frames[k].ctx = w.frameContext(k)
		w.frames[k].ctxValid = true
	}
	if d < 0 {
		return rootContext
	}
	return w.frames[d].ctx
}

// frameContext is frame k's context, given that the frames outside it
// are up to date. A function's body ends a name: a binding inside it
// (var x = …) is the last part the name gets.
func (w *walker) frameContext(k int) context {
	f := &w.frames[k]
	if f.kind == fkParams || f.arrowEncloses() {
		return rootContext
	}
	part, stop := w.framePart(f)
	object := f.kind == fkObject && !f.pattern
	switch {
	case stop:
		return context{node: w.newNode(part, -1), object: object}
	case f.kind == fkBody:
		return rootContext
	}
	out := rootContext
	if k > 0 {
		out = w.frames[k-1].ctx
	}
	if len(part) > 0 {
		out.node = w.newNode(part, out.node)
	}
	out.object = out.object || object
	return out
}

// arrowEncloses reports whether an arrow with an expression body, opened
// after the element's binding, encloses what is named: the name stops.
func (f *frame) arrowEncloses() bool {
	return f.lastArrow >= 0 && (f.binder.kind == bkNone || f.lastArrow > f.binder.at)
}

// framePart is the part a frame adds to a name and whether the name ends
// there: a class body its class's name (a declaration ends it), other
// frames their element's binding.
func (w *walker) framePart(f *frame) ([]Component, bool) {
	if f.kind != fkClass {
		return w.binderPart(f.binder)
	}
	if f.classNameTok < 0 {
		return nil, f.classDecl
	}
	return []Component{w.ident(int(f.classNameTok))}, f.classDecl
}

// binderPart is the part a frame's binding adds to a name, and whether
// it ends the name (a variable or an assignment target does; an object
// key does not).
func (w *walker) binderPart(b binder) ([]Component, bool) {
	switch b.kind {
	case bkKey:
		return []Component{w.ident(int(b.tok))}, false
	case bkIdent:
		return []Component{w.ident(int(b.tok))}, true
	case bkMember:
		if target, ok := w.memberTarget(int(b.tok)); ok {
			return target, true
		}
	}
	return nil, false
}

func reversed(c []Component) []Component {
	r := make([]Component, 0, len(c))
	for i := len(c) - 1; i >= 0; i-- {
		r = append(r, c[i])
	}
	return r
}

func (w *walker) newNode(part []Component, next int32) int32 {
	w.nodes = append(w.nodes, nameNode{first: int32(len(w.comps)), n: int32(len(part)), next: next})
	w.comps = append(w.comps, part...)
	return int32(len(w.nodes) - 1)
}

// scopeName is a scope's name as found: its own innermost part, the
// node of the parts outside it, and its prefixes.
type scopeName struct {
	own    []Component
	outer  int32
	prefix prefix
}

// prefix is what a name starts with: "get ", "set ", "new ", then
// "<object>.".
type prefix uint8

const (
	prefixGet prefix = 1 << iota
	prefixSet
	prefixNew
	prefixObject
)

func (n scopeName) empty() bool { return len(n.own) == 0 && n.outer < 0 }

// contextName is the name of an anonymous function, arrow or class: its
// context's parts.
func contextName(ctx context) scopeName {
	n := scopeName{outer: ctx.node}
	if ctx.open && ctx.object && ctx.node >= 0 {
		n.prefix |= prefixObject
	}
	return n
}

// withOwnName names a function or class by its own identifier: it
// replaces the innermost component of its context's name, as Sentry's
// scope naming does. The replaced binding stays, hidden, since a bundler
// may have written one original name twice (`var X = class _X`).
func (w *walker) withOwnName(ctx context, nameTok int) scopeName {
	n := contextName(ctx)
	if nameTok < 0 {
		return n
	}
	own := []Component{}
	if ctx.node >= 0 {
		node := w.nodes[ctx.node]
		own = append(own, w.comps[node.first:node.first+node.n]...)
		if last := &own[len(own)-1]; last.HasPos {
			last.Hidden = true
		} else {
			own = own[:len(own)-1]
		}
		n.outer = node.next
	}
	n.own = append(own, w.ident(nameTok))
	return n
}

// memberTarget reads the member chain ending at token end (a.b.c,
// this.x, a[b], a["k"]) into name components; false when the chain does
// not start at an identifier or `this` (a call's result).
func (w *walker) memberTarget(end int) ([]Component, bool) {
	var rev []Component
	for j := end; j >= 0 && end-j < maxTargetTokens; {
		part, next, base := w.memberStep(j)
		if part == nil {
			return nil, false
		}
		rev = append(rev, part...)
		if base {
			return reversed(rev), true
		}
		j = next
	}
	return nil, false
}

// memberStep reads the member chain's piece ending at token j, last
// component first: a .name, a [key], or the base the chain starts at
// (base true). It returns the token before the piece; nil when the chain
// cannot name.
func (w *walker) memberStep(j int) ([]Component, int, bool) {
	t := &w.toks[j]
	switch {
	case t.kind == tkIdent && isPropertyName(w.src, w.toks, j):
		return []Component{w.ident(j), interp(".")}, j - 2, false
	case t.kind == tkBracketClose:
		return w.computedKey(int(t.match), j), int(t.match) - 1, false
	case t.kind == tkIdent:
		return []Component{w.baseName(j)}, j, true
	}
	return nil, 0, false
}

// baseName names the start of a member chain: `this`, or a name token.
func (w *walker) baseName(j int) Component {
	if w.text(j) == "this" {
		return interp("this")
	}
	return w.ident(j)
}

// computedKey names a computed member [k] between tokens open and close,
// last component first: a literal as written, an identifier as a name
// token, anything else as <computed>.
func (w *walker) computedKey(open, close int) []Component {
	if close != open+2 {
		return []Component{interp("[<computed>]")}
	}
	k := open + 1
	switch w.toks[k].kind {
	case tkIdent:
		return []Component{interp("]"), w.ident(k), interp("[")}
	case tkStr, tkNum:
		return []Component{interp("[" + quoted(w.text(k)) + "]")}
	}
	return []Component{interp("[<computed>]")}
}

// quoted writes a string literal with double quotes, as Sentry prints a
// key's value.
func quoted(lit string) string {
	if len(lit) >= 2 && lit[0] == '\'' {
		return `"` + strings.ReplaceAll(lit[1:len(lit)-1], `"`, `\"`) + `"`
	}
	return lit
}

// element reads the head of an object literal's or class body's element
// at token i: a method (with its get, set, static, async, * modifiers)
// opens its scope, a `key:` binds the element. It returns the last token
// it consumed; false leaves token i to the main loop.
func (w *walker) element(i int) (int, bool) {
	j, accessor := w.modifiers(i)
	keyEnd, ok := w.keyEnd(j)
	switch {
	case !ok:
		return 0, false
	case w.isMethod(keyEnd):
		w.method(i, j, keyEnd, accessor)
	case w.isKeyValue(keyEnd):
		w.bindKey(j, keyEnd)
	case w.top().pattern:
		return 0, false
	case w.isField(j, keyEnd):
		// Its initializer is named after the class alone.
		return keyEnd + 1, true
	case w.isPatternDefault(j, keyEnd):
		return keyEnd + 1, true
	default:
		return 0, false
	}
	return w.afterKey(j, keyEnd), true
}

func (w *walker) isMethod(keyEnd int) bool {
	return w.is(keyEnd+1, tkParenOpen, "") && w.is(int(w.toks[keyEnd+1].match)+1, tkBraceBlock, "")
}

func (w *walker) isKeyValue(keyEnd int) bool {
	return w.top().kind == fkObject && w.is(keyEnd+1, tkPunct, ":")
}

func (w *walker) isField(key, keyEnd int) bool {
	return w.top().kind == fkClass && w.is(keyEnd+1, tkPunct, "=") && w.toks[key].kind != tkBracketOpen
}

// isPatternDefault: {a = () => …} can only be a destructuring pattern,
// whose default values nothing names.
func (w *walker) isPatternDefault(key, keyEnd int) bool {
	return w.top().kind == fkObject && w.is(keyEnd+1, tkPunct, "=") && w.toks[key].kind == tkIdent
}

// bindKey binds the element to its key: an identifier key names what
// the element holds, another key (a string, a computed key) only marks it
// as an object's.
func (w *walker) bindKey(key, keyEnd int) {
	b := binder{kind: bkOpaqueKey, tok: int32(key), at: int32(keyEnd + 1), q: w.top().q}
	if w.toks[key].kind == tkIdent {
		b.kind = bkKey
	}
	if f := w.top(); !f.pattern {
		f.binder, f.ctxValid = b, false
	}
}

// afterKey is the last token of an element's head the main loop skips: a
// computed key's tokens go through it, a key's colon does not.
func (w *walker) afterKey(key, keyEnd int) int {
	switch {
	case w.toks[key].kind == tkBracketOpen:
		return key - 1
	case w.is(keyEnd+1, tkPunct, ":"):
		return keyEnd + 1
	}
	return keyEnd
}

// modifiers skips an element's modifiers from i, returning the key's
// token and the accessor prefix of a getter or setter. A modifier word
// followed by what ends a key is the key itself ({get: 1}, get() {}).
func (w *walker) modifiers(i int) (int, prefix) {
	var accessor prefix
	j := i
	for ; j < len(w.toks) && j-i < 6; j++ {
		p, ok := w.modifier(j)
		if !ok {
			break
		}
		accessor |= p
	}
	return j, accessor
}

// modifier reads token j as a modifier: its accessor prefix, false when
// it is not one.
func (w *walker) modifier(j int) (prefix, bool) {
	if w.is(j, tkPunct, "*") {
		return 0, true
	}
	if w.toks[j].kind != tkIdent || w.endsKey(j+1) {
		return 0, false
	}
	return modifierWord(w.text(j))
}

func modifierWord(s string) (prefix, bool) {
	switch s {
	case "get":
		return prefixGet, true
	case "set":
		return prefixSet, true
	case "static", "async", "accessor":
		return 0, true
	}
	return 0, false
}

// endsKey reports whether token i follows a key: ( : = , } ; or the end.
func (w *walker) endsKey(i int) bool {
	if i >= len(w.toks) {
		return true
	}
	switch w.toks[i].kind {
	case tkParenOpen, tkBraceClose:
		return true
	case tkPunct:
		return isKeyEnd(w.text(i))
	}
	return false
}

// keyEnd returns the last token of the key starting at j.
func (w *walker) keyEnd(j int) (int, bool) {
	if j >= len(w.toks) {
		return 0, false
	}
	switch w.toks[j].kind {
	case tkIdent, tkPrivate, tkStr, tkNum:
		return j, true
	case tkBracketOpen:
		return int(w.toks[j].match), true
	}
	return 0, false
}

// method opens the scope of the method whose element starts at token i,
// key from token key to keyEnd. A class constructor opens none (the
// class's scope is where it runs) but is still a function boundary.
func (w *walker) method(i, key, keyEnd int, accessor prefix) {
	params := keyEnd + 1
	w.pendingParams = int32(params)
	scope := int32(-1)
	if !w.isConstructor(key, accessor) {
		scope = w.newScope(i, w.methodName(key, accessor))
	}
	w.bodies = append(w.bodies, pendingBody{tok: w.toks[params].match + 1, scope: scope, classNameTok: -1})
}

func (w *walker) isConstructor(key int, accessor prefix) bool {
	return w.top().kind == fkClass && accessor == 0 && w.is(key, tkIdent, "constructor")
}

// methodName names a method by its key within its context. An object's
// getter or setter is written <object>.… only when something names the
// object; a method always is.
func (w *walker) methodName(key int, accessor prefix) scopeName {
	ctx := w.context(len(w.frames) - 1)
	name := scopeName{own: w.keyComponents(key), outer: ctx.node, prefix: accessor}
	named := ctx.node >= 0 || accessor == 0 || w.top().kind == fkClass
	if ctx.open && ctx.object && named {
		name.prefix |= prefixObject
	}
	return name
}

// keyComponents names a method's key: an identifier as a name token, a
// private name as # and its token, other keys as Sentry prints them.
func (w *walker) keyComponents(key int) []Component {
	t := &w.toks[key]
	switch t.kind {
	case tkIdent:
		return []Component{w.ident(key)}
	case tkPrivate:
		return []Component{interp("#"), {Text: w.text(key)[1:], Pos: t.pos, HasPos: true}}
	case tkStr:
		return []Component{interp("<" + quoted(w.text(key)) + ">")}
	case tkNum:
		return []Component{interp("<" + w.text(key) + ">")}
	}
	return []Component{interp("<computed>")}
}

package jsscope

import "strings"

// inferName names a function or class from where it stands, walking the
// open frames outwards from frame d as Sentry's scope naming walks a
// syntax tree's ancestors: an object key or a class name adds a component
// and goes on; a variable or an assignment target ends the name; a
// function boundary (a body, parameters, an open arrow) ends it too. seed
// is what the scope itself adds first (a method's key), in order. An
// empty answer is an anonymous scope.
func (w *walker) inferName(d int, seed []Component) []Component {
	n := nameBuilder{rev: reversed(seed)}
	for walked := 0; d >= 0 && walked < maxWalkFrames && len(n.rev) < maxNameComponents; d, walked = d-1, walked+1 {
		f := &w.frames[d]
		if f.kind == fkBody || f.kind == fkParams {
			return n.finish(true)
		}
		b := f.binder
		if f.lastArrow >= 0 && (b.kind == bkNone || f.lastArrow > b.at) {
			// An arrow with an expression body encloses the scope.
			return n.finish(true)
		}
		switch b.kind {
		case bkKey:
			n.pushSep()
			n.push(w.ident(int(b.tok)))
		case bkIdent:
			n.pushSep()
			n.push(w.ident(int(b.tok)))
			return n.finish(false)
		case bkMember:
			if target, ok := w.memberTarget(int(b.tok)); ok {
				n.pushSep()
				n.rev = append(n.rev, target...)
				return n.finish(false)
			}
		}
		switch f.kind {
		case fkObject:
			n.inObject = true
		case fkClass:
			if f.classNameTok >= 0 {
				n.pushSep()
				n.push(w.ident(int(f.classNameTok)))
			}
			if f.classDecl {
				return n.finish(false)
			}
		}
	}
	return n.finish(true)
}

// nameBuilder holds a name's components last first, since the walk finds
// them from the inside out.
type nameBuilder struct {
	rev      []Component
	inObject bool
}

func reversed(c []Component) []Component {
	r := make([]Component, 0, len(c)+4)
	for i := len(c) - 1; i >= 0; i-- {
		r = append(r, c[i])
	}
	return r
}

func (n *nameBuilder) push(c Component) { n.rev = append(n.rev, c) }

func (n *nameBuilder) pushSep() {
	if len(n.rev) > 0 {
		n.push(interp("."))
	}
}

// finish returns the name in order. A name that ran into a function
// boundary or the top level from inside an object literal is marked as
// such (`<object>.key`); one that ended at a binding is not.
func (n *nameBuilder) finish(open bool) []Component {
	if open && n.inObject && len(n.rev) > 0 {
		n.push(interp("<object>."))
	}
	return reversed(n.rev)
}

// memberTarget reads the member chain ending at token end (a.b.c,
// this.x, a[b], a["k"]) into name components, last first; false when the
// chain does not start at an identifier or `this` (a call's result).
func (w *walker) memberTarget(end int) ([]Component, bool) {
	var rev []Component
	for j := end; j >= 0 && end-j < maxTargetTokens; {
		t := &w.toks[j]
		switch {
		case t.kind == tkIdent && isPropertyName(w.src, w.toks, j):
			rev = append(rev, w.ident(j), interp("."))
			j -= 2
		case t.kind == tkBracketClose:
			rev = append(rev, w.computedKey(int(t.match), j)...)
			j = int(t.match) - 1
		case t.kind == tkIdent && w.text(j) == "this":
			return append(rev, interp("this")), true
		case t.kind == tkIdent:
			return append(rev, w.ident(j)), true
		default:
			return nil, false
		}
	}
	return nil, false
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
	f := w.top()
	j, accessor := w.modifiers(i)
	keyEnd, ok := w.keyEnd(j)
	if !ok {
		return 0, false
	}
	switch {
	case w.is(keyEnd+1, tkParenOpen, "") && w.is(int(w.toks[keyEnd+1].match)+1, tkBraceBlock, ""):
		w.method(i, j, keyEnd, accessor)
	case f.kind == fkObject && w.is(keyEnd+1, tkPunct, ":"):
		f.binder = binder{kind: bkOpaqueKey, tok: int32(j), at: int32(keyEnd + 1)}
		if w.toks[j].kind == tkIdent {
			f.binder.kind = bkKey
		}
		if w.toks[j].kind != tkBracketOpen {
			return keyEnd + 1, true
		}
	case f.kind == fkClass && w.is(keyEnd+1, tkPunct, "=") && w.toks[j].kind != tkBracketOpen:
		// A field: its initializer is named after the class alone.
		return keyEnd + 1, true
	default:
		return 0, false
	}
	if w.toks[j].kind == tkBracketOpen {
		// The computed key's tokens go through the main loop.
		return j - 1, true
	}
	return keyEnd, true
}

// modifiers skips an element's modifiers from i; accessor is "get " or
// "set " for an accessor. A modifier word followed by what ends a key is
// the key itself ({get: 1}, get() {}).
func (w *walker) modifiers(i int) (int, string) {
	accessor := ""
	j := i
	for ; j < len(w.toks) && j-i < 6; j++ {
		if w.is(j, tkPunct, "*") {
			continue
		}
		if w.toks[j].kind != tkIdent || w.endsKey(j+1) {
			break
		}
		switch w.text(j) {
		case "get":
			accessor = "get "
		case "set":
			accessor = "set "
		case "static", "async", "accessor":
		default:
			return j, accessor
		}
	}
	return j, accessor
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
		s := w.text(i)
		return s == ":" || s == "=" || s == "," || s == ";"
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
func (w *walker) method(i, key, keyEnd int, accessor string) {
	params := keyEnd + 1
	body := w.toks[params].match + 1
	w.pendingParams = int32(params)
	f := w.top()
	if f.kind == fkClass && accessor == "" && w.is(key, tkIdent, "constructor") {
		w.bodies = append(w.bodies, pendingBody{tok: body, scope: -1, classNameTok: -1})
		return
	}
	keyName := w.keyComponents(key)
	var name []Component
	if f.kind == fkObject && accessor != "" {
		// An object's getter or setter: the object's name, then the key.
		name = w.inferName(len(w.frames)-1, nil)
		if len(name) > 0 {
			name = append(name, interp("."))
		}
		name = append(name, keyName...)
	} else {
		name = w.inferName(len(w.frames)-1, keyName)
	}
	if accessor != "" {
		name = append([]Component{interp(accessor)}, name...)
	}
	scope := w.newScope(i, name)
	w.bodies = append(w.bodies, pendingBody{tok: body, scope: scope, classNameTok: -1})
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

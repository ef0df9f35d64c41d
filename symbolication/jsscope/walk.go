package jsscope

import "fmt"

// The second pass: over the tokens, with the brackets matched, find each
// function, arrow, method, getter, setter and class, its extent, and the
// name tokens Sentry's scope naming gives it. The open brackets are kept
// as frames; each frame remembers what its current element is bound to
// (`x =`, `var x =`, `key:`) and the arrows with an expression body still
// open in it, which is all of the syntax tree the naming reads.

type frameKind uint8

const (
	fkRoot frameKind = iota
	fkBlock
	fkBody // a function's, method's or arrow's body: names stop here
	fkObject
	fkClass
	fkParen
	fkParams // parameters: names stop here too
	fkBracket
	fkTemplate
)

type binderKind uint8

const (
	bkNone      binderKind = iota
	bkKey                  // key: (an identifier key)
	bkOpaqueKey            // "key": or [key]: (no name component)
	bkIdent                // x = or var x =
	bkMember               // a.b = or a[b] =
)

// binder is what the current element of a frame is bound to: tok is the
// name's token (the last token of a member target), at the token where it
// was bound, q the conditionals open then (an assignment in a branch of
// a conditional ends with the branch).
type binder struct {
	kind       binderKind
	tok, at, q int32
}

type frame struct {
	kind frameKind
	// scope is the scope this frame's closing bracket ends, -1 for none.
	scope  int32
	binder binder
	// q counts the open `?` of conditionals; lastArrow is the `=>` token
	// of the latest arrow with an expression body still open here, -1.
	q, lastArrow int32
	elemStart    bool
	// pattern marks a destructuring pattern's brackets, where keys and
	// default values name nothing.
	pattern bool
	// classNameTok and classDecl describe a class body frame.
	classNameTok int32
	classDecl    bool
	// ctx is what this frame and those outside it add to a name, valid
	// until the frame's binding or open arrows change.
	ctx      context
	ctxValid bool
}

type openArrow struct {
	scope, frame, q0, at int32
}

// pendingBody is a { (or class body) that will close a scope.
type pendingBody struct {
	tok, scope   int32
	classNameTok int32
	classDecl    bool
}

// scopeRec is one scope: its extent and its name: its prefixes, the
// parts of node outer (outermost first), then comps[own:own+ownLen].
type scopeRec struct {
	start, end  Position
	own, ownLen int32
	outer       int32
	prefix      prefix
}

// Bounds that keep the naming of each scope constant work: a member
// target is read over at most maxTargetTokens tokens, a class's head over
// maxClassHead; a lookup writes at most the innermost maxNameParts parts
// of a name.
const (
	maxNameParts    = 32
	maxTargetTokens = 64
	maxClassHead    = 256
)

type walker struct {
	src           []byte
	toks          []token
	end           Position
	frames        []frame
	arrows        []openArrow
	bodies        []pendingBody
	pendingParams int32
	scopes        []scopeRec
	nodes         []nameNode
	comps         []Component
}

func (w *walker) text(i int) string { t := &w.toks[i]; return string(w.src[t.start:t.end]) }

func (w *walker) is(i int, kind tokKind, text string) bool {
	return i >= 0 && i < len(w.toks) && w.toks[i].kind == kind && (text == "" || w.text(i) == text)
}

func (w *walker) top() *frame { return &w.frames[len(w.frames)-1] }

// walk finds the scopes of every token.
func (w *walker) walk() error {
	w.frames = append(w.frames, frame{kind: fkRoot, scope: -1, lastArrow: -1, classNameTok: -1})
	w.pendingParams = -1
	for i := 0; i < len(w.toks); i++ {
		j, err := w.step(i)
		if err != nil {
			return err
		}
		i = j
	}
	w.closeArrows(len(w.frames)-1, w.end, -1)
	return nil
}

// step handles token i (and, for an element's head, the tokens after
// it), returning the last token it handled.
func (w *walker) step(i int) (int, error) {
	if w.asiBoundary(i) {
		w.endElement(i)
	}
	if f := w.top(); f.elemStart {
		// Only object literals and class bodies have elements.
		f.elemStart = false
		if j, ok := w.element(i); ok {
			return j, nil
		}
	}
	return i, w.token(i)
}

// token handles one token outside an element's head.
func (w *walker) token(i int) error {
	t := &w.toks[i]
	switch t.kind {
	case tkParenOpen, tkBracketOpen, tkTemplateHead, tkBraceBlock, tkBraceObject, tkBraceClass:
		w.open(i)
	case tkParenClose, tkBracketClose, tkBraceClose, tkTemplateTail:
		w.close(i)
	case tkTemplateMiddle:
		w.endElement(i)
	case tkPunct:
		w.punct(i)
	case tkIdent:
		return w.word(i)
	}
	return nil
}

// word handles the keywords that open scopes.
func (w *walker) word(i int) error {
	if isPropertyName(w.src, w.toks, i) {
		return nil
	}
	switch w.text(i) {
	case "function":
		return w.function(i)
	case "class":
		w.class(i)
	}
	return nil
}

func (w *walker) punct(i int) {
	f := w.top()
	switch s := w.text(i); s {
	case ",", ";":
		w.endElement(i)
	case "?":
		f.q++
	case ":":
		w.colon(i)
	case "=>":
		w.arrow(i)
	default:
		if isAssignment(s) {
			w.assign(i)
		}
	}
}

// colon ends the branch of a conditional: the arrows opened and the
// binding made since its `?` end with it.
func (w *walker) colon(i int) {
	f := w.top()
	w.closeArrows(len(w.frames)-1, w.toks[i].pos, f.q)
	if f.q > 0 && f.binder.kind != bkNone && f.binder.q >= f.q {
		f.binder, f.ctxValid = binder{}, false
	}
	f.q = max(0, f.q-1)
}

func isAssignment(s string) bool {
	switch s {
	case "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??=":
		return true
	}
	return false
}

// endElement ends the current element of the top frame at token i: a
// comma, semicolon, template substitution or inserted semicolon.
func (w *walker) endElement(i int) {
	d := len(w.frames) - 1
	w.closeArrows(d, w.toks[i].pos, -1)
	f := &w.frames[d]
	f.binder = binder{}
	f.ctxValid = false
	f.q = 0
	switch {
	case f.kind == fkObject && w.text(i) == ",":
		f.elemStart = true
	case f.kind == fkClass:
		f.elemStart = true
	}
}

// closeArrows ends at pos the expression-bodied arrows open in frame d
// (those opened since the q-th `?` when q ≥ 0, all when q < 0).
func (w *walker) closeArrows(d int, pos Position, q int32) {
	for n := len(w.arrows); n > 0 && w.arrows[n-1].closesAt(d, q); n-- {
		w.scopes[w.arrows[n-1].scope].end = pos
		w.arrows = w.arrows[:n-1]
	}
	f := &w.frames[d]
	f.lastArrow = w.lastArrowOf(d)
	f.ctxValid = false
}

// closesAt reports whether the arrow ends with what ends frame d's
// element (q < 0) or the branch of its q-th conditional.
func (a openArrow) closesAt(d int, q int32) bool {
	return int(a.frame) == d && (q < 0 || a.q0 >= q)
}

// lastArrowOf returns the `=>` of the last arrow open in frame d, -1.
func (w *walker) lastArrowOf(d int) int32 {
	if n := len(w.arrows); n > 0 && int(w.arrows[n-1].frame) == d {
		return w.arrows[n-1].at
	}
	return -1
}

// asiBoundary reports whether a semicolon is inserted before token i: a
// line break between the end of an expression and a token that cannot
// continue it, in a frame that holds statements.
func (w *walker) asiBoundary(i int) bool {
	if i == 0 || !w.toks[i].nl {
		return false
	}
	switch w.top().kind {
	case fkRoot, fkBlock, fkBody, fkClass:
	default:
		return false
	}
	return w.endsExpression(i-1) && w.startsStatement(i)
}

func (w *walker) endsExpression(i int) bool {
	switch w.toks[i].kind {
	case tkIdent:
		return !keywordBeforeExpression(w.text(i))
	case tkNum, tkStr, tkTemplate, tkTemplateTail, tkRegex, tkPrivate, tkParenClose, tkBracketClose, tkBraceClose:
		return true
	case tkPunct:
		s := w.text(i)
		return s == "++" || s == "--"
	}
	return false
}

func (w *walker) startsStatement(i int) bool {
	switch w.toks[i].kind {
	case tkIdent:
		return !isInfixWord(w.text(i))
	case tkNum, tkStr, tkPrivate, tkBraceBlock, tkBraceObject, tkBraceClass:
		return true
	case tkPunct:
		return isPrefixOperator(w.text(i))
	}
	return false
}

// isInfixWord reports whether the word s continues an expression.
func isInfixWord(s string) bool { return s == "in" || s == "instanceof" || s == "of" }

// isPrefixOperator reports whether s starts an expression (after a line
// break, a new statement).
func isPrefixOperator(s string) bool {
	switch s {
	case "++", "--", "!", "~":
		return true
	}
	return false
}

// open pushes the frame of an open bracket.
func (w *walker) open(i int) {
	f := frame{scope: -1, lastArrow: -1, classNameTok: -1}
	if b, ok := w.takeBody(i); ok {
		f.scope, f.classNameTok, f.classDecl = b.scope, b.classNameTok, b.classDecl
		f.kind = fkBody
	}
	switch {
	case w.toks[i].kind == tkBraceClass:
		f.kind = fkClass
	case f.kind != fkBody:
		f.kind = w.frameKind(i)
	}
	f.elemStart = f.kind == fkObject || f.kind == fkClass
	f.pattern = w.isPattern(i, f.kind)
	w.frames = append(w.frames, f)
}

// isPattern reports whether the object or array literal opening at
// token i is a destructuring pattern: inside parameters or another
// pattern, after var, let or const, or assigned to.
func (w *walker) isPattern(i int, kind frameKind) bool {
	if kind != fkObject && kind != fkBracket {
		return false
	}
	parent := w.top()
	return parent.pattern || parent.kind == fkParams || w.is(int(w.toks[i].match)+1, tkPunct, "=") || w.afterDeclaration(i)
}

// afterDeclaration reports whether token i follows var, let or const.
func (w *walker) afterDeclaration(i int) bool {
	switch {
	case i == 0 || w.toks[i-1].kind != tkIdent:
		return false
	}
	switch w.text(i - 1) {
	case "var", "let", "const":
		return true
	}
	return false
}

// takeBody returns the pending body that opens at token i.
func (w *walker) takeBody(i int) (pendingBody, bool) {
	n := len(w.bodies)
	if n == 0 || w.bodies[n-1].tok != int32(i) {
		return pendingBody{}, false
	}
	b := w.bodies[n-1]
	w.bodies = w.bodies[:n-1]
	return b, true
}

// frameKind is the kind of the frame bracket i opens, when it is no
// function's body.
func (w *walker) frameKind(i int) frameKind {
	switch w.toks[i].kind {
	case tkParenOpen:
		return w.parenKind(i)
	case tkBracketOpen:
		return fkBracket
	case tkTemplateHead:
		return fkTemplate
	case tkBraceObject:
		return fkObject
	}
	return fkBlock
}

// parenKind tells a function's or an arrow's parameters from other
// parentheses.
func (w *walker) parenKind(i int) frameKind {
	if w.pendingParams == int32(i) || w.is(int(w.toks[i].match)+1, tkPunct, "=>") {
		return fkParams
	}
	return fkParen
}

// close pops the frame a closing bracket ends, ending its scope and its
// open arrows.
func (w *walker) close(i int) {
	d := len(w.frames) - 1
	if d == 0 {
		return // the lexer matched every bracket: not reached
	}
	w.closeArrows(d, w.toks[i].pos, -1)
	f := w.frames[d]
	w.frames = w.frames[:d]
	if f.scope >= 0 {
		w.scopes[f.scope].end = w.after(i)
	}
	if parent := w.top(); parent.kind == fkClass && f.kind == fkBody {
		parent.elemStart = true
	}
}

// after is the position just past token i: the next token's start, or the
// end of the source.
func (w *walker) after(i int) Position {
	if i+1 < len(w.toks) {
		return w.toks[i+1].pos
	}
	return w.end
}

// newScope records a scope starting at token start with the given name.
func (w *walker) newScope(start int, name scopeName) int32 {
	w.scopes = append(w.scopes, scopeRec{
		start: w.toks[start].pos, end: w.end,
		own: int32(len(w.comps)), ownLen: int32(len(name.own)), outer: name.outer, prefix: name.prefix,
	})
	w.comps = append(w.comps, name.own...)
	return int32(len(w.scopes) - 1)
}

// function handles the `function` keyword at i: a declaration or an
// expression, named by its own identifier when it has one.
func (w *walker) function(i int) error {
	nameTok, j := w.functionName(i)
	if !w.is(j, tkParenOpen, "") || !w.is(int(w.toks[j].match)+1, tkBraceBlock, "") {
		return fmt.Errorf("%w: function at byte %d has no parameters and body", errSyntax, w.toks[i].start)
	}
	scope := w.newScope(w.asyncStart(i), w.withOwnName(w.context(len(w.frames)-1), nameTok))
	w.pendingParams = int32(j)
	w.bodies = append(w.bodies, pendingBody{tok: w.toks[j].match + 1, scope: scope, classNameTok: -1})
	return nil
}

// functionName returns the name token of the function keyword at i (-1
// for none) and the token after the head (its parameters).
func (w *walker) functionName(i int) (int, int) {
	j := i + 1
	if w.is(j, tkPunct, "*") {
		j++
	}
	if w.is(j, tkIdent, "") {
		return j, j + 1
	}
	return -1, j
}

// asyncStart is where the function or arrow starting at token i starts:
// at an `async` before it on the same line.
func (w *walker) asyncStart(i int) int {
	if w.is(i-1, tkIdent, "async") && !w.toks[i].nl && !isPropertyName(w.src, w.toks, i-1) {
		return i - 1
	}
	return i
}

// ident is the name component of identifier token i.
func (w *walker) ident(i int) Component {
	return Component{Text: w.text(i), Pos: w.toks[i].pos, HasPos: true}
}

func interp(s string) Component { return Component{Text: s} }

// class handles the `class` keyword at i: its scope is the whole body
// (field initializers and the constructor run in it).
func (w *walker) class(i int) {
	nameTok := -1
	if w.is(i+1, tkIdent, "") && w.text(i+1) != "extends" {
		nameTok = i + 1
	}
	body := w.classBody(i)
	if body < 0 {
		return
	}
	name := w.withOwnName(w.context(len(w.frames)-1), nameTok)
	if !name.empty() {
		name.prefix |= prefixNew
	}
	scope := w.newScope(i, name)
	w.bodies = append(w.bodies, pendingBody{tok: int32(body), scope: scope, classNameTok: int32(nameTok), classDecl: nameTok >= 0 && w.atStatementStart(i)})
}

// classBody finds the body of the class at i, skipping its heritage
// expression's brackets; -1 past maxClassHead tokens.
func (w *walker) classBody(i int) int {
	for k := i + 1; k < len(w.toks) && k <= i+maxClassHead; k++ {
		switch w.toks[k].kind {
		case tkBraceClass:
			return k
		case tkParenOpen, tkBracketOpen, tkBraceObject, tkBraceBlock, tkTemplateHead:
			k = int(w.toks[k].match)
		}
	}
	return -1
}

// atStatementStart reports whether token i starts a statement (a class
// declaration rather than an expression).
func (w *walker) atStatementStart(i int) bool {
	if i == 0 {
		return true
	}
	p := &w.toks[i-1]
	switch p.kind {
	case tkBraceBlock, tkBraceClose:
		return true
	case tkPunct:
		return w.text(i-1) == ";"
	case tkIdent:
		return w.text(i-1) == "export" || w.text(i-1) == "default"
	}
	return w.toks[i].nl && w.endsExpression(i-1)
}

// arrow handles `=>` at i: the scope starts at its parameters.
func (w *walker) arrow(i int) {
	if i == 0 {
		return
	}
	start := i - 1
	if w.toks[start].kind == tkParenClose {
		start = int(w.toks[start].match)
	}
	start = w.asyncStart(start)
	d := len(w.frames) - 1
	scope := w.newScope(start, contextName(w.context(d)))
	if w.is(i+1, tkBraceBlock, "") {
		w.bodies = append(w.bodies, pendingBody{tok: int32(i + 1), scope: scope, classNameTok: -1})
		return
	}
	f := &w.frames[d]
	w.arrows = append(w.arrows, openArrow{scope: scope, frame: int32(d), q0: f.q, at: int32(i)})
	f.lastArrow = int32(i)
	f.ctxValid = false
}

// assign binds the top frame's element to the target of the assignment
// operator at i, when the target can name a function (an identifier or a
// member chain); other targets (destructuring, calls) leave the binding.
func (w *walker) assign(i int) {
	f := w.top()
	if f.kind == fkParams || f.pattern || i == 0 {
		return
	}
	switch p := &w.toks[i-1]; {
	case p.kind == tkIdent && isPropertyName(w.src, w.toks, i-1), p.kind == tkBracketClose:
		f.binder, f.ctxValid = binder{kind: bkMember, tok: int32(i - 1), at: int32(i), q: f.q}, false
	case p.kind == tkIdent:
		f.binder, f.ctxValid = binder{kind: bkIdent, tok: int32(i - 1), at: int32(i), q: f.q}, false
	}
}

package jsscope

// What the lexer decides from the tokens before: whether a `/` starts a
// regular expression, and what kind of block a `{` opens. Both are read
// from the previous token and the open brackets, the way a parser would
// know them, without building a syntax tree.

// prevTok returns the last token, nil at the start.
func (lx *lexer) prevTok() *token {
	if len(lx.toks) == 0 {
		return nil
	}
	return &lx.toks[len(lx.toks)-1]
}

func (lx *lexer) text(t *token) string { return string(lx.src[t.start:t.end]) }

// isPropertyName reports whether the token at index i follows a `.` or
// `?.`: a keyword there is a property name (x.return / 2).
func isPropertyName(src []byte, toks []token, i int) bool {
	return i > 0 && isDot(src, &toks[i-1])
}

func isDot(src []byte, t *token) bool {
	if t.kind != tkPunct {
		return false
	}
	switch string(src[t.start:t.end]) {
	case ".", "?.":
		return true
	}
	return false
}

// regexAllowed reports whether a `/` here starts a regular expression:
// where an expression may begin, not after one.
func (lx *lexer) regexAllowed() bool {
	p := lx.prevTok()
	if p == nil {
		return true
	}
	switch p.kind {
	case tkIdent, tkParenClose, tkBraceClose, tkPunct:
		return lx.regexAfter(p)
	}
	return !endsOperand(p.kind)
}

// endsOperand reports whether a token of this kind ends an operand: a `/`
// after it divides.
func endsOperand(kind tokKind) bool {
	switch kind {
	case tkNum, tkStr, tkTemplate, tkTemplateTail, tkRegex, tkPrivate, tkBracketClose:
		return true
	}
	return false
}

// regexAfter decides a `/` after a word, a ), a } or a punctuator.
func (lx *lexer) regexAfter(p *token) bool {
	switch p.kind {
	case tkIdent:
		return !isPropertyName(lx.src, lx.toks, len(lx.toks)-1) && keywordBeforeExpression(lx.text(p))
	case tkParenClose:
		return lx.controlBefore(int(p.match))
	case tkBraceClose:
		// After a block a statement starts; after an object literal the
		// expression goes on.
		return lx.toks[p.match].kind != tkBraceObject
	}
	return !isPostfix(lx.text(p))
}

func isPostfix(s string) bool { return s == "++" || s == "--" }

// keywordBeforeExpression reports whether an expression may follow the
// identifier s: true for operators and statement keywords written as
// words, false for names and for the keywords that are values.
func keywordBeforeExpression(s string) bool {
	switch s {
	case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
		"case", "do", "else", "yield", "await", "extends":
		return true
	}
	return false
}

func isControlKeyword(s string) bool {
	switch s {
	case "if", "while", "for", "with":
		return true
	}
	return false
}

// wordBefore returns the word before token index i, "" when that is not
// a word (or is a property name).
func (lx *lexer) wordBefore(i int) string {
	if i <= 0 || lx.toks[i-1].kind != tkIdent || isPropertyName(lx.src, lx.toks, i-1) {
		return ""
	}
	return lx.text(&lx.toks[i-1])
}

// controlBefore reports whether the ( at token index i (or about to be)
// opens the condition of if, while, for (or for await) or with.
func (lx *lexer) controlBefore(i int) bool {
	s := lx.wordBefore(i)
	if s == "await" {
		s = lx.wordBefore(i - 1)
	}
	return isControlKeyword(s)
}

// noteClass remembers the depth of a `class` keyword: the next { at that
// depth opens its body (after an optional name and `extends` expression).
func (lx *lexer) noteClass(start int) {
	if string(lx.src[start:lx.i]) == "class" && !isPropertyName(lx.src, lx.toks, len(lx.toks)) && !lx.keyFollows() {
		lx.classAt = append(lx.classAt, len(lx.stack))
	}
}

// keyFollows reports whether the word just read is a property key or a
// method's name ({class: 1}, {class() {}}): what follows it is not a
// class's name, heritage or body.
func (lx *lexer) keyFollows() bool {
	j := lx.i
	for j < len(lx.src) && classes[lx.src[j]]&clSpace != 0 {
		j++
	}
	return j == len(lx.src) || isKeyEnd(string(lx.src[j]))
}

// braceKind decides what a { opens from the token before it.
func (lx *lexer) braceKind() tokKind {
	if lx.opensClassBody() {
		return tkBraceClass
	}
	p := lx.prevTok()
	if p == nil {
		return tkBraceBlock
	}
	switch p.kind {
	case tkIdent:
		return braceAfterWord(lx.text(p))
	case tkPunct:
		return lx.braceAfterPunct(lx.text(p))
	case tkTemplateHead, tkTemplateMiddle, tkParenOpen, tkBracketOpen:
		return tkBraceObject
	}
	// ), }, a literal: a block (a function body, a statement after ASI).
	return tkBraceBlock
}

// opensClassBody reports whether a { here is the body of the last
// `class` keyword, which waits at this depth.
func (lx *lexer) opensClassBody() bool {
	n := len(lx.classAt)
	if n == 0 || lx.classAt[n-1] != len(lx.stack) {
		return false
	}
	lx.classAt = lx.classAt[:n-1]
	return true
}

// braceAfterWord decides a { after the word s: an object after an
// operator word (return {…}) or a declaration (a pattern: const {a} = o),
// a block after else, do and names.
func braceAfterWord(s string) tokKind {
	switch s {
	case "do", "else":
		return tkBraceBlock
	case "var", "let", "const":
		return tkBraceObject
	}
	if keywordBeforeExpression(s) {
		return tkBraceObject
	}
	return tkBraceBlock
}

// braceAfterPunct decides a { after the punctuator s.
func (lx *lexer) braceAfterPunct(s string) tokKind {
	switch s {
	case "=>", ";":
		return tkBraceBlock
	case ":":
		return lx.braceAfterColon()
	}
	return tkBraceObject
}

// braceAfterColon: a label's or a case's block inside a block; a
// property value or the branch of a conditional elsewhere.
func (lx *lexer) braceAfterColon() tokKind {
	inBlock := len(lx.stack) == 0 || lx.stack[len(lx.stack)-1].kind == tkBraceBlock
	if inBlock && !lx.openConditional() {
		return tkBraceBlock
	}
	return tkBraceObject
}

// openConditional reports whether a `?` of a conditional is open in the
// current statement: scanning back from the `:` to the statement's start
// counts the `?` against the `:`. The look back is bounded by
// maxConditionalScan tokens, so a long run of `a:{` cannot make the lexer
// quadratic.
func (lx *lexer) openConditional() bool {
	depth := 0
	for i := len(lx.toks) - 2; i >= max(0, len(lx.toks)-maxConditionalScan); i-- {
		t := &lx.toks[i]
		if isCloser(t.kind) {
			i = int(t.match)
			continue
		}
		d, stop := lx.conditionalStep(t)
		if stop {
			break
		}
		depth += d
	}
	return depth > 0
}

// conditionalStep is what token t counts looking back for an open `?`:
// +1 for a `?`, -1 for a `:`; stop at the start of the statement (an
// open bracket, a `;`, a case).
func (lx *lexer) conditionalStep(t *token) (int, bool) {
	switch t.kind {
	case tkBraceBlock, tkBraceObject, tkBraceClass, tkParenOpen, tkBracketOpen, tkTemplateHead:
		return 0, true
	case tkPunct:
		return conditionalPunct(lx.text(t))
	case tkIdent:
		s := lx.text(t)
		return 0, s == "case" || s == "default"
	}
	return 0, false
}

func conditionalPunct(s string) (int, bool) {
	switch s {
	case "?":
		return 1, false
	case ":":
		return -1, false
	}
	return 0, s == ";"
}

func isCloser(kind tokKind) bool {
	return kind == tkParenClose || kind == tkBracketClose || kind == tkBraceClose
}

const maxConditionalScan = 256

// isKeyEnd reports whether s, after a word, makes the word a key or a
// method's name rather than a keyword.
func isKeyEnd(s string) bool {
	switch s {
	case "(", ")", ":", ",", "}", "=", ";":
		return true
	}
	return false
}

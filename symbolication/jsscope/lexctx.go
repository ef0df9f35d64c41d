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

// isPropertyName reports whether the identifier token at index i follows a
// `.` or `?.`: a keyword there is a property name (x.return / 2).
func isPropertyName(src []byte, toks []token, i int) bool {
	if i == 0 {
		return false
	}
	p := toks[i-1]
	if p.kind != tkPunct {
		return false
	}
	s := string(src[p.start:p.end])
	return s == "." || s == "?."
}

// regexAllowed reports whether a `/` here starts a regular expression:
// where an expression may begin, not after one.
func (lx *lexer) regexAllowed() bool {
	p := lx.prevTok()
	if p == nil {
		return true
	}
	switch p.kind {
	case tkIdent:
		if isPropertyName(lx.src, lx.toks, len(lx.toks)-1) {
			return false
		}
		return keywordBeforeExpression(lx.text(p))
	case tkNum, tkStr, tkTemplate, tkTemplateTail, tkRegex, tkPrivate, tkBracketClose:
		return false
	case tkParenClose:
		return lx.closedControl(p)
	case tkBraceClose:
		// After a block a statement starts; after an object literal the
		// expression goes on.
		return lx.toks[p.match].kind != tkBraceObject
	case tkPunct:
		s := lx.text(p)
		return s != "++" && s != "--"
	}
	return true
}

// closedControl reports whether the ) token p closed the condition of an
// if, while, for or with.
func (lx *lexer) closedControl(p *token) bool {
	open := int(p.match)
	return open > 0 && lx.toks[open-1].kind == tkIdent && !isPropertyName(lx.src, lx.toks, open-1) &&
		isControlKeyword(lx.text(&lx.toks[open-1])) ||
		open > 1 && lx.text(&lx.toks[open-1]) == "await" && lx.text(&lx.toks[open-2]) == "for"
}

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
	return s == "if" || s == "while" || s == "for" || s == "with"
}

// prevIsControlKeyword reports whether a ( here opens the condition of a
// control statement.
func (lx *lexer) prevIsControlKeyword() bool {
	n := len(lx.toks)
	if n == 0 || lx.toks[n-1].kind != tkIdent || isPropertyName(lx.src, lx.toks, n-1) {
		return false
	}
	s := lx.text(&lx.toks[n-1])
	return isControlKeyword(s) || s == "await" && n > 1 && lx.text(&lx.toks[n-2]) == "for"
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
	for j := lx.i; j < len(lx.src); j++ {
		switch lx.src[j] {
		case ' ', '\t':
			continue
		case '(', ':', ',', '}', '=', ';', ')':
			return true
		}
		return false
	}
	return true
}

// braceKind decides what a { opens from the token before it.
func (lx *lexer) braceKind() tokKind {
	if n := len(lx.classAt); n > 0 && lx.classAt[n-1] == len(lx.stack) {
		lx.classAt = lx.classAt[:n-1]
		return tkBraceClass
	}
	p := lx.prevTok()
	if p == nil {
		return tkBraceBlock
	}
	switch p.kind {
	case tkIdent:
		if keywordBeforeExpression(lx.text(p)) && lx.text(p) != "do" && lx.text(p) != "else" {
			return tkBraceObject
		}
		return tkBraceBlock
	case tkPunct:
		return lx.braceAfterPunct(lx.text(p))
	case tkTemplateHead, tkTemplateMiddle, tkParenOpen, tkBracketOpen:
		return tkBraceObject
	}
	// ), }, a literal: a block (a function body, a statement after ASI).
	return tkBraceBlock
}

// braceAfterPunct decides a { after the punctuator s.
func (lx *lexer) braceAfterPunct(s string) tokKind {
	switch s {
	case "=>", ";":
		return tkBraceBlock
	case ":":
		// A label's or a case's block inside a block; a property value
		// or the branch of a conditional elsewhere.
		if len(lx.stack) == 0 || lx.stack[len(lx.stack)-1].kind == tkBraceBlock {
			if !lx.openConditional() {
				return tkBraceBlock
			}
		}
		return tkBraceObject
	}
	return tkBraceObject
}

// openConditional reports whether a `?` of a conditional is open in the
// current statement: scanning back from the `:` to the statement's start
// counts the `?` against the `:`. Bounded by the statement, which is
// scanned once per `:` followed by a `{`, a case or label block in
// practice.
func (lx *lexer) openConditional() bool {
	depth := 0
	for i := len(lx.toks) - 2; i >= 0 && i >= len(lx.toks)-maxConditionalScan; i-- {
		t := &lx.toks[i]
		switch t.kind {
		case tkParenClose, tkBracketClose, tkBraceClose:
			i = int(t.match)
			continue
		case tkBraceBlock, tkBraceObject, tkBraceClass, tkParenOpen, tkBracketOpen, tkTemplateHead:
			return depth > 0
		case tkPunct:
			switch lx.text(t) {
			case "?":
				depth++
			case ":":
				depth--
			case ";":
				return depth > 0
			}
		case tkIdent:
			if lx.text(t) == "case" || lx.text(t) == "default" {
				return depth > 0
			}
		}
	}
	return depth > 0
}

// maxConditionalScan bounds openConditional's look back, so that a long
// run of `a:{` cannot make the lexer quadratic.
const maxConditionalScan = 256

package jsscope

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// tokKind is what a token is, as far as finding scopes needs: brackets
// carry the kind of their block, which the lexer decides because a `/`
// after a `}` or `)` is a division or a regular expression by it.
type tokKind uint8

const (
	tkIdent   tokKind = iota // identifier or keyword
	tkPrivate                // #name
	tkNum
	tkStr
	tkTemplate       // a template without substitutions
	tkTemplateHead   // `…${
	tkTemplateMiddle // }…${
	tkTemplateTail   // }…`
	tkRegex
	tkPunct // every other punctuator: text tells which
	tkParenOpen
	tkParenClose
	tkBracketOpen
	tkBracketClose
	tkBraceBlock  // { of a statement block or a function body
	tkBraceObject // { of an object literal (or pattern)
	tkBraceClass  // { of a class body
	tkBraceClose
)

// token is one token of the source. Positions are kept for its start only:
// a frame points at a token's start, so a scope that ends before token i
// ends at token i's start.
type token struct {
	kind tokKind
	// nl is whether a line terminator precedes the token (for ASI).
	nl         bool
	start, end int32 // byte offsets
	pos        Position
	// match is the index of the matching bracket (template heads match
	// their tail), -1 for other tokens.
	match int32
}

// errSyntax is what a source the scanner cannot follow fails with: the
// index then has no scopes, so no frame gets a wrong name from it.
var errSyntax = errors.New("jsscope: cannot scan source")

// maxSourceBytes keeps every offset within int32.
const maxSourceBytes = 1<<31 - 1

// lexFrame is an open bracket while lexing: the kind decides what a `/`
// after its closing bracket is.
type lexFrame struct {
	tok  int32
	kind tokKind
}

type lexer struct {
	src  []byte
	i    int
	toks []token
	// stack holds the open brackets; classAt the depths at which a
	// `class` keyword waits for its body.
	stack   []lexFrame
	classAt []int
	nl      bool
	cursor  positionCursor
}

// lex splits src into tokens, matching brackets. It fails on what it
// cannot follow (an unterminated string, comment, template or regular
// expression, unbalanced brackets).
func lex(src []byte) ([]token, Position, error) {
	if len(src) > maxSourceBytes {
		return nil, Position{}, fmt.Errorf("%w: %d bytes", errSyntax, len(src))
	}
	// Minified bundles have a token per 3.2 bytes (the 2 MB one of
	// BenchmarkParseBundle), unminified code one per 5 or 6: room for
	// one per 3 bytes is seldom grown.
	lx := &lexer{src: src, toks: make([]token, 0, len(src)/3+16), cursor: positionCursor{src: src}}
	if bytes.HasPrefix(src, []byte("#!")) {
		lx.i = lx.lineCommentLen()
	}
	if err := lx.tokens(); err != nil {
		return nil, Position{}, err
	}
	if len(lx.stack) > 0 {
		return nil, Position{}, fmt.Errorf("%w: %d brackets left open at the end", errSyntax, len(lx.stack))
	}
	return lx.toks, lx.cursor.at(len(src)), nil
}

// tokens reads every token to the end of the source.
func (lx *lexer) tokens() error {
	for {
		if err := lx.skipSpace(); err != nil {
			return err
		}
		if lx.i >= len(lx.src) {
			return nil
		}
		if err := lx.next(); err != nil {
			return err
		}
	}
}

// skipSpace skips white space and comments, noting line terminators.
func (lx *lexer) skipSpace() error {
	for lx.i < len(lx.src) {
		n, err := lx.spaceLen()
		if n == 0 || err != nil {
			return err
		}
		lx.i += n
	}
	return nil
}

// spaceLen is the length of the white space, line terminator or comment
// at lx.i, 0 where a token starts.
func (lx *lexer) spaceLen() (int, error) {
	c := lx.src[lx.i]
	switch {
	case classes[c]&clSpace != 0:
		return 1, nil
	case isLineTerminatorAt(lx.src, lx.i):
		lx.nl = true
		return lineTerminatorLen(lx.src, lx.i), nil
	case c == '/':
		return lx.commentLen()
	case c >= utf8.RuneSelf:
		return unicodeSpaceLen(lx.src[lx.i:]), nil
	}
	return 0, nil
}

func unicodeSpaceLen(b []byte) int {
	if r, size := utf8.DecodeRune(b); isSpaceRune(r) {
		return size
	}
	return 0
}

// commentLen is the length of the comment at lx.i, 0 for a `/` that
// starts none.
func (lx *lexer) commentLen() (int, error) {
	switch lx.peek(1) {
	case '/':
		return lx.lineCommentLen(), nil
	case '*':
		return lx.blockCommentLen()
	}
	return 0, nil
}

// lineCommentLen is the length from lx.i to the end of its line.
func (lx *lexer) lineCommentLen() int {
	j := lx.i
	for j < len(lx.src) && !isLineTerminatorAt(lx.src, j) {
		j++
	}
	return j - lx.i
}

func (lx *lexer) blockCommentLen() (int, error) {
	n := bytes.Index(lx.src[lx.i+2:], []byte("*/"))
	if n < 0 {
		return 0, fmt.Errorf("%w: comment at byte %d is not closed", errSyntax, lx.i)
	}
	if containsLineTerminator(lx.src[lx.i+2 : lx.i+2+n]) {
		lx.nl = true
	}
	return n + 4, nil
}

func (lx *lexer) peek(d int) byte {
	if lx.i+d < len(lx.src) {
		return lx.src[lx.i+d]
	}
	return 0
}

// next reads one token at lx.i.
func (lx *lexer) next() error {
	start := lx.i
	kind, ok, err := lx.scanOperand()
	if !ok {
		return lx.punct()
	}
	if err != nil {
		return err
	}
	if kind == tkIdent {
		lx.noteClass(start)
	}
	lx.emit(kind, start)
	if kind == tkTemplateHead {
		lx.stack = append(lx.stack, lexFrame{tok: int32(len(lx.toks) - 1), kind: tkTemplateHead})
	}
	return nil
}

// scanOperand reads a word, number or literal at lx.i; false when a
// punctuator is there.
func (lx *lexer) scanOperand() (tokKind, bool, error) {
	if kind, ok := lx.scanWord(); ok {
		return kind, true, nil
	}
	return lx.scanLiteral()
}

// scanWord reads an identifier (or keyword), a private name or a number.
func (lx *lexer) scanWord() (tokKind, bool) {
	switch c := lx.src[lx.i]; {
	case isIdentStart(c):
		lx.scanIdent()
		return tkIdent, true
	case c == '#':
		lx.i++
		lx.scanIdent()
		return tkPrivate, true
	case isDigit(c) || c == '.' && isDigit(lx.peek(1)):
		lx.scanNumber()
		return tkNum, true
	}
	return 0, false
}

// scanLiteral reads a string, a template (up to its first substitution)
// or a regular expression.
func (lx *lexer) scanLiteral() (tokKind, bool, error) {
	switch c := lx.src[lx.i]; c {
	case '"', '\'':
		return tkStr, true, lx.scanString(c)
	case '`':
		lx.i++
		kind, err := lx.scanTemplate(tkTemplate, tkTemplateHead)
		return kind, true, err
	case '/':
		if lx.regexAllowed() {
			return tkRegex, true, lx.scanRegex()
		}
	}
	return 0, false, nil
}

// emit appends the token from start to lx.i.
func (lx *lexer) emit(kind tokKind, start int) {
	lx.toks = append(lx.toks, token{
		kind: kind, nl: lx.nl, start: int32(start), end: int32(lx.i),
		pos: lx.cursor.at(start), match: -1,
	})
	lx.nl = false
}

// scanIdent reads an identifier; any non-ASCII character that is not a
// space or line terminator is taken as part of one (bundles escape the
// rest), and a backslash as the start of a \u escape.
func (lx *lexer) scanIdent() {
	for lx.i < len(lx.src) {
		n := identCharLen(lx.src[lx.i:])
		if n == 0 {
			return
		}
		lx.i += n
	}
}

// identCharLen is the length of the identifier character b starts with,
// 0 when it is none.
func identCharLen(b []byte) int {
	if b[0] < utf8.RuneSelf {
		if isIdentPart(b[0]) {
			return 1
		}
		return 0
	}
	r, size := utf8.DecodeRune(b)
	if endsIdentRune(r) {
		return 0
	}
	return size
}

// scanNumber reads a numeric literal loosely: digits, letters (hex,
// exponent, BigInt n), separators, a dot, and the sign of an exponent.
func (lx *lexer) scanNumber() {
	hex := lx.src[lx.i] == '0' && lx.peek(1)|0x20 == 'x'
	for lx.i < len(lx.src) && numberGoesOn(lx.src, lx.i, hex) {
		lx.i++
	}
}

// numberGoesOn reports whether src[i] continues the number before it.
func numberGoesOn(src []byte, i int, hex bool) bool {
	c := src[i]
	if classes[c]&clNumberPart != 0 {
		return true
	}
	return (c == '+' || c == '-') && !hex && src[i-1]|0x20 == 'e'
}

func (lx *lexer) scanString(quote byte) error {
	start := lx.i
	lx.i++
	for lx.i < len(lx.src) {
		switch lx.src[lx.i] {
		case quote:
			lx.i++
			return nil
		case '\n', '\r':
			return fmt.Errorf("%w: string at byte %d ends at a line break", errSyntax, start)
		}
		lx.i += charLen(lx.src, lx.i)
	}
	return fmt.Errorf("%w: string at byte %d is not closed", errSyntax, start)
}

// charLen is the length of the literal's character at src[i]: an escape
// takes the character after its backslash (a whole line terminator).
func charLen(src []byte, i int) int {
	if src[i] != '\\' || i+1 >= len(src) {
		return 1
	}
	return 1 + lineTerminatorLen(src, i+1)
}

// scanTemplate reads template characters up to the closing backquote
// (whole) or a `${` (head): the substitution is lexed as tokens, and its
// closing brace continues the template.
func (lx *lexer) scanTemplate(whole, head tokKind) (tokKind, error) {
	start := lx.i
	for lx.i < len(lx.src) {
		switch {
		case lx.src[lx.i] == '`':
			lx.i++
			return whole, nil
		case lx.src[lx.i] == '$' && lx.peek(1) == '{':
			lx.i += 2
			return head, nil
		}
		lx.i += charLen(lx.src, lx.i)
	}
	return 0, fmt.Errorf("%w: template at byte %d is not closed", errSyntax, start)
}

func (lx *lexer) scanRegex() error {
	start := lx.i
	lx.i++
	inClass := false
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		if c == '\n' || c == '\r' {
			break
		}
		if c == '/' && !inClass {
			lx.i++
			lx.scanIdent() // flags
			return nil
		}
		inClass = inCharacterClass(c, inClass)
		lx.i += charLen(lx.src, lx.i)
	}
	return fmt.Errorf("%w: regular expression at byte %d is not closed on its line", errSyntax, start)
}

// inCharacterClass says whether a regular expression is inside [...]
// after the character c: a / there does not end it.
func inCharacterClass(c byte, in bool) bool {
	switch c {
	case '[':
		return true
	case ']':
		return false
	}
	return in
}

// punctuators, longest first within each leading character's group.
var punctuators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// punct reads a punctuator; brackets are matched here.
func (lx *lexer) punct() error {
	c := lx.src[lx.i]
	switch c {
	case '(', '[', '{':
		return lx.open(c)
	case ')', ']', '}':
		return lx.close(c)
	}
	n := lx.punctLen(c)
	if n == 0 {
		return fmt.Errorf("%w: unexpected byte %q at %d", errSyntax, c, lx.i)
	}
	start := lx.i
	lx.i += n
	lx.emit(tkPunct, start)
	return nil
}

// punctLen is the length of the longest punctuator at lx.i, 0 for none.
func (lx *lexer) punctLen(c byte) int {
	for _, p := range punctuators {
		if p[0] == c && lx.hasPunct(p) {
			return len(p)
		}
	}
	if classes[c]&clSinglePunct != 0 {
		return 1
	}
	return 0
}

// hasPunct reports whether punctuator p is at lx.i; ?. before a digit is
// a conditional and a number (a?.5:1).
func (lx *lexer) hasPunct(p string) bool {
	return hasPrefixAt(lx.src, lx.i, p) && (p != "?." || !isDigit(lx.peek(2)))
}

func hasPrefixAt(src []byte, i int, p string) bool {
	return len(src)-i >= len(p) && string(src[i:i+len(p)]) == p
}

func (lx *lexer) open(c byte) error {
	start := lx.i
	lx.i++
	f := lexFrame{tok: int32(len(lx.toks))}
	switch c {
	case '(':
		f.kind = tkParenOpen
	case '[':
		f.kind = tkBracketOpen
	default:
		f.kind = lx.braceKind()
	}
	lx.emit(f.kind, start)
	lx.stack = append(lx.stack, f)
	return nil
}

func (lx *lexer) close(c byte) error {
	if len(lx.stack) == 0 {
		return fmt.Errorf("%w: %q at byte %d closes nothing", errSyntax, c, lx.i)
	}
	open := lx.stack[len(lx.stack)-1]
	if open.kind == tkTemplateHead && c == '}' {
		return lx.continueTemplate(open)
	}
	want, kind := closerOf(open.kind)
	if c != want {
		return fmt.Errorf("%w: %q at byte %d closes %q", errSyntax, c, lx.i, want)
	}
	start := lx.i
	lx.i++
	lx.emit(kind, start)
	lx.stack = lx.stack[:len(lx.stack)-1]
	closeIdx := int32(len(lx.toks) - 1)
	lx.toks[open.tok].match = closeIdx
	lx.toks[closeIdx].match = open.tok
	return nil
}

// continueTemplate reads on after the } that ends a template's
// substitution, to the next substitution or the template's end.
func (lx *lexer) continueTemplate(open lexFrame) error {
	start := lx.i
	lx.i++
	kind, err := lx.scanTemplate(tkTemplateTail, tkTemplateMiddle)
	if err != nil {
		return err
	}
	lx.emit(kind, start)
	if kind == tkTemplateTail {
		lx.stack = lx.stack[:len(lx.stack)-1]
		lx.toks[open.tok].match = int32(len(lx.toks) - 1)
	}
	return nil
}

// closerOf is the closing bracket of an open one, and its token kind.
func closerOf(open tokKind) (byte, tokKind) {
	switch open {
	case tkParenOpen:
		return ')', tkParenClose
	case tkBracketOpen:
		return ']', tkBracketClose
	}
	return '}', tkBraceClose
}

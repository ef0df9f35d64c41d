package jsscope

import (
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
	tok     int32
	kind    tokKind
	control bool // ( of if/while/for/with: a `/` after its ) starts a regex
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
	// One token per 4 bytes is about what minified bundles have.
	lx := &lexer{src: src, toks: make([]token, 0, len(src)/4+1), cursor: positionCursor{src: src}}
	lx.skipHashbang()
	for {
		if err := lx.skipSpace(); err != nil {
			return nil, Position{}, err
		}
		if lx.i >= len(src) {
			break
		}
		if err := lx.next(); err != nil {
			return nil, Position{}, err
		}
	}
	if len(lx.stack) > 0 {
		return nil, Position{}, fmt.Errorf("%w: %d brackets left open at the end", errSyntax, len(lx.stack))
	}
	return lx.toks, lx.cursor.at(len(src)), nil
}

func (lx *lexer) skipHashbang() {
	if len(lx.src) >= 2 && lx.src[0] == '#' && lx.src[1] == '!' {
		for lx.i < len(lx.src) && !isLineTerminatorAt(lx.src, lx.i) {
			lx.i++
		}
	}
}

// skipSpace skips white space and comments, noting line terminators.
func (lx *lexer) skipSpace() error {
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			lx.i++
		case isLineTerminatorAt(lx.src, lx.i):
			lx.nl = true
			lx.i += lineTerminatorLen(lx.src, lx.i)
		case c == '/' && lx.peek(1) == '/':
			for lx.i < len(lx.src) && !isLineTerminatorAt(lx.src, lx.i) {
				lx.i++
			}
		case c == '/' && lx.peek(1) == '*':
			if err := lx.skipBlockComment(); err != nil {
				return err
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(lx.src[lx.i:])
			if !isSpaceRune(r) {
				return nil
			}
			lx.i += size
		default:
			return nil
		}
	}
	return nil
}

func (lx *lexer) skipBlockComment() error {
	start := lx.i
	lx.i += 2
	for lx.i+1 < len(lx.src) {
		if lx.src[lx.i] == '*' && lx.src[lx.i+1] == '/' {
			lx.i += 2
			return nil
		}
		if isLineTerminatorAt(lx.src, lx.i) {
			lx.nl = true
		}
		lx.i++
	}
	return fmt.Errorf("%w: comment at byte %d is not closed", errSyntax, start)
}

func isSpaceRune(r rune) bool {
	return r == 0xa0 || r == 0xfeff || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x202f || r == 0x205f || r == 0x3000
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
	c := lx.src[start]
	var kind tokKind
	var err error
	switch {
	case isIdentStart(c):
		lx.scanIdent()
		kind = tkIdent
		lx.noteClass(start)
	case c == '#':
		lx.i++
		lx.scanIdent()
		kind = tkPrivate
	case isDigit(c) || (c == '.' && isDigit(lx.peek(1))):
		lx.scanNumber()
		kind = tkNum
	case c == '"' || c == '\'':
		err = lx.scanString(c)
		kind = tkStr
	case c == '`':
		lx.i++
		kind, err = lx.scanTemplate(tkTemplate, tkTemplateHead)
	case c == '/' && lx.regexAllowed():
		err = lx.scanRegex()
		kind = tkRegex
	default:
		return lx.punct()
	}
	if err != nil {
		return err
	}
	lx.emit(kind, start)
	if kind == tkTemplateHead {
		lx.stack = append(lx.stack, lexFrame{tok: int32(len(lx.toks) - 1), kind: tkTemplateHead})
	}
	return nil
}

// emit appends the token from start to lx.i.
func (lx *lexer) emit(kind tokKind, start int) {
	lx.toks = append(lx.toks, token{
		kind: kind, nl: lx.nl, start: int32(start), end: int32(lx.i),
		pos: lx.cursor.at(start), match: -1,
	})
	lx.nl = false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '\\' || c >= utf8.RuneSelf
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// scanIdent reads an identifier; any non-ASCII character that is not a
// space or line terminator is taken as part of one (bundles escape the
// rest), and a backslash as the start of a \u escape.
func (lx *lexer) scanIdent() {
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(lx.src[lx.i:])
			if isSpaceRune(r) || r == 0x2028 || r == 0x2029 {
				return
			}
			lx.i += size
			continue
		}
		if !isIdentPart(c) {
			return
		}
		lx.i++
	}
}

// scanNumber reads a numeric literal loosely: digits, letters (hex,
// exponent, BigInt n), separators, a dot, and the sign of an exponent.
func (lx *lexer) scanNumber() {
	hex := lx.src[lx.i] == '0' && (lx.peek(1)|0x20 == 'x')
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case isIdentPart(c) && c < utf8.RuneSelf && c != '\\' && c != '$', c == '.':
			lx.i++
		case (c == '+' || c == '-') && !hex && lx.src[lx.i-1]|0x20 == 'e':
			lx.i++
		default:
			return
		}
	}
}

func (lx *lexer) scanString(quote byte) error {
	start := lx.i
	lx.i++
	for lx.i < len(lx.src) {
		switch c := lx.src[lx.i]; c {
		case quote:
			lx.i++
			return nil
		case '\\':
			lx.i++
			if lx.i < len(lx.src) {
				lx.i += lineTerminatorLen(lx.src, lx.i)
			}
		case '\n', '\r':
			return fmt.Errorf("%w: string at byte %d ends at a line break", errSyntax, start)
		default:
			lx.i++
		}
	}
	return fmt.Errorf("%w: string at byte %d is not closed", errSyntax, start)
}

// scanTemplate reads template characters up to the closing backquote
// (whole) or a `${` (head): the substitution is lexed as tokens, and its
// closing brace continues the template.
func (lx *lexer) scanTemplate(whole, head tokKind) (tokKind, error) {
	start := lx.i
	for lx.i < len(lx.src) {
		switch lx.src[lx.i] {
		case '`':
			lx.i++
			return whole, nil
		case '\\':
			lx.i += 2
		case '$':
			if lx.peek(1) == '{' {
				lx.i += 2
				return head, nil
			}
			lx.i++
		default:
			lx.i++
		}
	}
	return 0, fmt.Errorf("%w: template at byte %d is not closed", errSyntax, start)
}

func (lx *lexer) scanRegex() error {
	start := lx.i
	lx.i++
	inClass := false
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case c == '\\':
			lx.i += 2
			continue
		case c == '\n' || c == '\r':
			return fmt.Errorf("%w: regular expression at byte %d ends at a line break", errSyntax, start)
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			lx.i++
			lx.scanIdent() // flags
			return nil
		}
		lx.i++
	}
	return fmt.Errorf("%w: regular expression at byte %d is not closed", errSyntax, start)
}

// punctuators, longest first within each leading character's group.
var punctuators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// punct reads a punctuator; brackets are matched here.
func (lx *lexer) punct() error {
	start := lx.i
	c := lx.src[start]
	switch c {
	case '(', '[', '{':
		return lx.open(c)
	case ')', ']', '}':
		return lx.close(c)
	}
	n := 1
	for _, p := range punctuators {
		// ?. before a digit is a conditional and a number (a?.5:1).
		if p[0] == c && hasPrefixAt(lx.src, start, p) && (p != "?." || !isDigit(lx.peek(2))) {
			n = len(p)
			break
		}
	}
	if n == 1 && !isSinglePunct(c) {
		return fmt.Errorf("%w: unexpected byte %q at %d", errSyntax, c, start)
	}
	lx.i += n
	lx.emit(tkPunct, start)
	return nil
}

func isSinglePunct(c byte) bool {
	switch c {
	case '.', ';', ',', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^', '!', '~', '?', ':', '=', '@':
		return true
	}
	return false
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
		f.kind, f.control = tkParenOpen, lx.prevIsControlKeyword()
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
	start := lx.i
	if len(lx.stack) == 0 {
		return fmt.Errorf("%w: %q at byte %d closes nothing", errSyntax, c, start)
	}
	open := lx.stack[len(lx.stack)-1]
	if open.kind == tkTemplateHead && c == '}' {
		// The substitution ends: the template goes on.
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
	want, kind := closerOf(open.kind)
	if c != want {
		return fmt.Errorf("%w: %q at byte %d closes %q", errSyntax, c, start, want)
	}
	lx.i++
	lx.emit(kind, start)
	lx.stack = lx.stack[:len(lx.stack)-1]
	closeIdx := int32(len(lx.toks) - 1)
	lx.toks[open.tok].match = closeIdx
	lx.toks[closeIdx].match = open.tok
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

package stacktrace

import "strings"

// rubyException is an exception of a full_message text while it is read.
type rubyException struct {
	Exception
	top Frame // the header's frame, the innermost; Frames holds the "from" lines
	// The message's first line sits before " (Type)" on the header line;
	// the lines after it (from contStart to contEnd in the text) go on.
	contStart, contEnd int
}

// parseRuby reads Exception#full_message(highlight: false, order: :top),
// which the OpenTelemetry Ruby SDK records:
//
//	app.rb:22:in `rescue in report': report failed (RuntimeError)
//		from app.rb:19:in `report'
//		from app.rb:26:in `<main>'
//	app.rb:11:in `Integer': invalid value for Integer(): "x" (ArgumentError)
//		from app.rb:11:in `block in total'
//
// Ruby 3.4 quotes labels as 'Ledger#total' instead of `total'. The header
// line of each exception holds its innermost frame; its cause follows its
// frames with a header line of its own. The caught exception comes first and
// frames print innermost first; both are reversed into Sentry's order.
func parseRuby(text string) []Exception {
	var r rubyReader
	for l := range linesOf(text) {
		r.read(l)
	}
	kept := r.printed.chain()
	chain := make([]Exception, 0, len(kept))
	for i := len(kept) - 1; i >= 0; i-- {
		chain = append(chain, kept[i].resolve(text))
	}
	return chain
}

// rubyReader is the state of parseRuby between lines.
type rubyReader struct {
	printed   chainKeeper[rubyException]
	cur       *rubyException
	continues bool // the current message may go on over more lines
}

func (r *rubyReader) read(l line) {
	s := l.s
	if rest, ok := strings.CutPrefix(s, "\tfrom "); ok {
		r.fromLine(rest)
		return
	}
	if strings.HasPrefix(s, "\t ... ") { // "\t ... 10067 levels..." of a SystemStackError
		return
	}
	if r.headerLine(s) {
		return
	}
	if r.continues && strings.TrimSpace(s) != "" {
		r.cur.continueMessage(l)
	}
}

// fromLine adds the frame of a "\tfrom path:12:in `m'" line.
func (r *rubyReader) fromLine(rest string) {
	r.continues = false
	if f, _, ok := parseRubyLocation(rest); ok && r.cur != nil {
		r.cur.Frames = appendInnermostFirst(r.cur.Frames, f)
	}
}

// headerLine starts an exception at "path:12:in `m': message (Type)".
func (r *rubyReader) headerLine(s string) bool {
	f, rest, ok := parseRubyLocation(s)
	if !ok {
		return false
	}
	msg, isHeader := strings.CutPrefix(rest, ": ")
	if !isHeader {
		return false
	}
	r.cur = r.printed.add(rubyException{Exception: parseRubyMessage(msg), top: f})
	r.continues = true
	return true
}

// continueMessage extends the message to the end of l.
func (e *rubyException) continueMessage(l line) {
	if e.contEnd == 0 {
		e.contStart = l.start
	}
	e.contEnd = l.end()
}

// resolve is the exception in Sentry's shape: its whole message, its
// frames innermost last.
func (e rubyException) resolve(text string) Exception {
	if e.contEnd > 0 {
		e.Value += "\n" + text[e.contStart:e.contEnd]
	}
	e.Frames = innermostFirst(append([]Frame{e.top}, e.Frames...))
	return e.Exception
}

// parseRubyMessage reads the header's "message (Type)"; Ruby prints
// "unhandled exception" for an empty message, without a type.
func parseRubyMessage(msg string) Exception {
	if msg == "unhandled exception" {
		return Exception{}
	}
	if strings.HasSuffix(msg, ")") {
		if open := strings.LastIndex(msg, " ("); open >= 0 {
			if typ := msg[open+2 : len(msg)-1]; isRubyConstant(typ) {
				return Exception{Type: typ, Value: msg[:open]}
			}
		}
	}
	return Exception{Value: msg}
}

// isRubyConstant reports whether s is a class name such as "Foo::BarError".
func isRubyConstant(s string) bool {
	return s != "" && isUpper(s[0]) && strings.IndexFunc(s, notRubyConstantRune) < 0
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func notRubyConstantRune(r rune) bool { return r < 0x80 && !isIdentByte(byte(r)) && r != ':' }

// parseRubyLocation reads "path:12:in `label'" (Ruby up to 3.3) or
// "path:12:in 'Class#label'" (3.4) and returns what follows it.
func parseRubyLocation(s string) (f Frame, rest string, ok bool) {
	in, ok := rubyLabelMarker(s)
	if !ok {
		return f, "", false
	}
	file, lineno, ok := cutTrailingNumber(s[:in])
	if !ok || file == "" {
		return f, "", false
	}
	labelStart := in + len(":in `")
	labelLen := strings.IndexByte(s[labelStart:], '\'')
	if labelLen < 0 {
		return f, "", false
	}
	f.Filename, f.Lineno = file, lineno
	if isAbsPath(file) {
		f.AbsPath = file
	}
	f.Function = s[labelStart : labelStart+labelLen]
	return f, s[labelStart+labelLen+1:], true
}

// rubyLabelMarker finds the ":in " followed by a quote that ends a
// location's line number.
func rubyLabelMarker(s string) (int, bool) {
	in := strings.Index(s, ":in ")
	if in <= 0 || in+len(":in ") >= len(s) {
		return 0, false
	}
	q := s[in+len(":in ")]
	return in, q == '`' || q == '\''
}

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
	var (
		printed   chainKeeper[rubyException]
		cur       *rubyException
		continues bool // the current message may go on over more lines
	)
	for l := range linesOf(text) {
		s := l.s
		if rest, ok := strings.CutPrefix(s, "\tfrom "); ok {
			continues = false
			if f, _, ok := parseRubyLocation(rest); ok && cur != nil {
				cur.Frames = appendInnermostFirst(cur.Frames, f)
			}
			continue
		}
		if strings.HasPrefix(s, "\t ... ") { // "\t ... 10067 levels..." of a SystemStackError
			continue
		}
		if f, rest, ok := parseRubyLocation(s); ok {
			if msg, isHeader := strings.CutPrefix(rest, ": "); isHeader {
				cur = printed.add(rubyException{Exception: parseRubyMessage(msg), top: f})
				continues = true
				continue
			}
		}
		if continues && strings.TrimSpace(s) != "" {
			if cur.contEnd == 0 {
				cur.contStart = l.start
			}
			cur.contEnd = l.end()
		}
	}
	kept := printed.chain()
	chain := make([]Exception, 0, len(kept))
	for i := len(kept) - 1; i >= 0; i-- {
		e := kept[i]
		if e.contEnd > 0 {
			e.Value += "\n" + text[e.contStart:e.contEnd]
		}
		e.Frames = innermostFirst(append([]Frame{e.top}, e.Frames...))
		chain = append(chain, e.Exception)
	}
	return chain
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
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) && s[i] != ':' {
			return false
		}
	}
	return true
}

// parseRubyLocation reads "path:12:in `label'" (Ruby up to 3.3) or
// "path:12:in 'Class#label'" (3.4) and returns what follows it.
func parseRubyLocation(s string) (f Frame, rest string, ok bool) {
	in := strings.Index(s, ":in ")
	if in <= 0 || in+len(":in ") >= len(s) {
		return f, "", false
	}
	if q := s[in+len(":in ")]; q != '`' && q != '\'' {
		return f, "", false
	}
	colon := strings.LastIndexByte(s[:in], ':')
	if colon <= 0 {
		return f, "", false
	}
	lineno, ok := atoi(s[colon+1 : in])
	if !ok {
		return f, "", false
	}
	labelStart := in + len(":in `")
	labelLen := strings.IndexByte(s[labelStart:], '\'')
	if labelLen < 0 {
		return f, "", false
	}
	f.Filename, f.Lineno = s[:colon], lineno
	if isAbsPath(f.Filename) {
		f.AbsPath = f.Filename
	}
	f.Function = s[labelStart : labelStart+labelLen]
	return f, s[labelStart+labelLen+1:], true
}

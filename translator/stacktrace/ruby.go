package stacktrace

import "strings"

// rubyException is an exception of a full_message text while it is read.
type rubyException struct {
	Exception
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
func parseRuby(text string, lines []line) []Exception {
	var printed []rubyException
	continues := false // the current message may go on over more lines
	for _, l := range lines {
		s := l.s
		if rest, ok := strings.CutPrefix(s, "\tfrom "); ok {
			continues = false
			if f, _, ok := parseRubyLocation(rest); ok && len(printed) > 0 {
				cur := &printed[len(printed)-1]
				cur.Frames = append(cur.Frames, f)
			}
			continue
		}
		if strings.HasPrefix(s, "\t ... ") { // "\t ... 10067 levels..." of a SystemStackError
			continue
		}
		if f, rest, ok := parseRubyLocation(s); ok {
			if msg, isHeader := strings.CutPrefix(rest, ": "); isHeader {
				e := rubyException{Exception: parseRubyMessage(msg)}
				e.Frames = []Frame{f}
				printed = append(printed, e)
				continues = true
				continue
			}
		}
		if continues && len(printed) > 0 && strings.TrimSpace(s) != "" {
			cur := &printed[len(printed)-1]
			if cur.contEnd == 0 {
				cur.contStart = l.start
			}
			cur.contEnd = l.end()
		}
	}
	chain := make([]Exception, 0, len(printed))
	for i := len(printed) - 1; i >= 0; i-- {
		e := printed[i]
		if e.contEnd > 0 {
			e.Value += "\n" + text[e.contStart:e.contEnd]
		}
		chain = append(chain, e.Exception)
	}
	chain = trimChain(chain)
	for i := range chain {
		chain[i].Frames = innermostFirst(chain[i].Frames)
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
		c := s[i]
		if !(c == ':' || c == '_' || c >= 0x80 ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
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

package stacktrace

import "strings"

// detect names the language of the first line that only one runtime
// prints: Python's "Traceback" header, Go's "goroutine N [...]:" header, a
// frame line ("at ..." in the Java, V8 and .NET shapes), or a Ruby location
// (":12:in `m'") on the first line or a "from" line. Messages come before
// frames in every format but Python's, so a message that imitates another
// language's frame can mislead it; the frame shapes themselves do not
// overlap.
func detect(text string) Language {
	first := true
	for l := range linesOf(text) {
		t := strings.TrimLeft(l.s, " \t")
		if t == "" {
			continue
		}
		if lang := detectLine(l.s, t, first); lang != "" {
			return lang
		}
		first = false
	}
	return ""
}

func detectLine(s, t string, first bool) Language {
	switch {
	case strings.HasSuffix(t, "Traceback (most recent call last):"):
		return Python
	case isGoroutineHeader(s):
		return Go
	case strings.HasPrefix(t, "at "):
		return frameLanguage(t[len("at "):])
	case strings.HasPrefix(t, "from ") && strings.HasPrefix(s, "\t"):
		return rubyIf(isRubyLocation(t[len("from "):]))
	case first:
		return rubyIf(isRubyLocation(t))
	}
	return ""
}

func rubyIf(ok bool) Language {
	if ok {
		return Ruby
	}
	return ""
}

func isRubyLocation(s string) bool {
	_, _, ok := parseRubyLocation(s)
	return ok
}

// frameLanguage tells the "at ..." frames apart: Java's "\tat a.B.m(B.java:3)"
// names a source file (or "Native Method"/"Unknown Source") in parentheses
// that follow the method directly; .NET's "   at A.B.M(String s) in f:line 3"
// lists parameters there; Mono's "  at A.B.M (String s) [0x00012] in f:3"
// adds an IL offset; V8's "    at f (file:3:7)" or "    at file:3:7" ends
// with a line and a column.
func frameLanguage(rest string) Language {
	if _, ok := parseDotNetFrame(rest); ok {
		return DotNet
	}
	if _, ok := parseJavaFrame(rest); ok {
		return Java
	}
	if _, ok := parseJSFrame(rest); ok {
		return JavaScript
	}
	return ""
}

func isGoroutineHeader(s string) bool {
	rest, ok := strings.CutPrefix(s, "goroutine ")
	if !ok || !strings.HasSuffix(rest, "]:") {
		return false
	}
	id, _, ok := strings.Cut(rest, " [")
	_, isNum := atoi(id)
	return ok && isNum
}

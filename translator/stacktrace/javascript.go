package stacktrace

import "strings"

// parseJavaScript reads V8's Error.stack, which the OpenTelemetry JS SDK
// records, and node's util.inspect of an error, which adds its cause:
//
//	TypeError: message
//	    at new Repository (/app/repo.js:12:13)
//	    at Object.load [as fetch] (/app/app.js:36:10)
//	    at async handler (/app/app.js:45:15)
//	    at /app/app.js:18:42
//	    at eval (eval at evaluate (/app/app.js:50:10), <anonymous>:1:9) {
//	  [cause]: Error: inner
//	      at ...
//	}
//
// "Caused by: " (how some loggers print a cause) is read like "[cause]: ".
// The caught error is printed first and its causes after it, each innermost
// frame first; both are reversed into Sentry's order.
func parseJavaScript(text string) []Exception {
	var (
		printed    chainKeeper[Exception]
		cur        *Exception
		valueStart = -1
	)
	for l := range linesOf(text) {
		t := strings.TrimLeft(l.s, " \t")
		cause, isCause := cutCausePrefix(t)
		switch {
		case strings.HasPrefix(t, "at "):
			valueStart = -1
			f, ok := parseJSFrame(t[len("at "):])
			if !ok {
				continue
			}
			if cur == nil { // a stack without its header line
				cur = printed.add(Exception{})
			}
			cur.Frames = appendInnermostFirst(cur.Frames, f)
		case isCause:
			e, vs := parseJSHeader(cause)
			cur = printed.add(e)
			valueStart = offsetIn(l, cause, vs)
		case cur == nil && t != "":
			header := strings.TrimPrefix(t, "Uncaught ") // browsers' console
			e, vs := parseJSHeader(header)
			cur = printed.add(e)
			valueStart = offsetIn(l, header, vs)
		case valueStart >= 0 && strings.TrimSpace(l.s) != "":
			cur.Value = text[valueStart:l.end()]
		}
	}
	chain := reverse(printed.chain())
	for i := range chain {
		chain[i].Frames = innermostFirst(chain[i].Frames)
	}
	return chain
}

func cutCausePrefix(t string) (string, bool) {
	if rest, ok := strings.CutPrefix(t, "[cause]: "); ok {
		return rest, true
	}
	return strings.CutPrefix(t, "Caused by: ")
}

// parseJSHeader reads the first line of Error.stack, `${name}: ${message}`
// or `${name}`; node adds a code: "TypeError [ERR_X]: message". A line that
// does not start with a name is all message. valueStart is the message's
// offset in s, -1 when there is none.
func parseJSHeader(s string) (e Exception, valueStart int) {
	name, msg, hasMsg := strings.Cut(s, ": ")
	typ, _, _ := strings.Cut(name, " [") // node's error code
	if !isQualifiedName(typ, "$") {
		return Exception{Value: s}, 0
	}
	e.Type = typ
	if !hasMsg {
		return e, -1
	}
	e.Value = msg
	return e, len(name) + len(": ")
}

// parseJSFrame reads what follows "at " in a V8 frame: "fn (location)" or a
// bare "location", where location is "file:line:col", "native",
// "<anonymous>", "index N" (Promise.all) or an eval origin. An "async "
// prefix marks an await continuation and is dropped from the name; the eval
// origin gives the eval call site as the location, as Sentry's JS SDKs do.
func parseJSFrame(rest string) (Frame, bool) {
	var f Frame
	rest = strings.TrimSuffix(rest, " {") // util.inspect opens the error's properties
	rest = strings.TrimPrefix(rest, "async ")
	if strings.HasSuffix(rest, ")") {
		open := openingParen(rest)
		if open <= 0 || rest[open-1] != ' ' {
			return f, false
		}
		f.Function = rest[:open-1]
		loc := rest[open+1 : len(rest)-1]
		if strings.HasPrefix(loc, "eval at ") {
			loc = evalSite(loc)
		}
		return f, parseJSLocation(&f, loc)
	}
	if !parseJSLocation(&f, rest) || f.Lineno == 0 {
		return f, false
	}
	return f, true
}

// openingParen finds the parenthesis that the last byte of s closes.
func openingParen(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// evalSite takes the innermost location of an eval origin:
// "eval at f (/app/a.js:5:3), <anonymous>:1:9" gives "/app/a.js:5:3".
func evalSite(loc string) string {
	closing := strings.IndexByte(loc, ')')
	if closing < 0 {
		return loc
	}
	open := strings.LastIndexByte(loc[:closing], '(')
	if open < 0 {
		return loc
	}
	return loc[open+1 : closing]
}

func parseJSLocation(f *Frame, loc string) bool {
	switch {
	case loc == "native", loc == "<anonymous>", loc == "unknown location", strings.HasPrefix(loc, "index "):
		return true
	}
	rest, col, ok := cutTrailingNumber(loc)
	if !ok {
		return false
	}
	file, lineno, ok := cutTrailingNumber(rest)
	if !ok || file == "" {
		return false
	}
	f.Filename, f.Lineno, f.Colno = file, lineno, col
	if isAbsPath(file) {
		f.AbsPath = file
	}
	return true
}

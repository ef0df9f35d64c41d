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
	r := jsReader{text: text, valueStart: -1}
	for l := range linesOf(text) {
		r.read(l)
	}
	chain := reverse(r.printed.chain())
	for i := range chain {
		chain[i].Frames = innermostFirst(chain[i].Frames)
	}
	return chain
}

// jsReader is the state of parseJavaScript between lines.
type jsReader struct {
	text       string
	printed    chainKeeper[Exception]
	cur        *Exception
	valueStart int // offset of the current message while it may go on
}

func (r *jsReader) read(l line) {
	t := strings.TrimLeft(l.s, " \t")
	cause, isCause := cutCausePrefix(t)
	switch {
	case strings.HasPrefix(t, "at "):
		r.frameLine(t[len("at "):])
	case isCause:
		r.header(l, cause)
	case r.cur == nil && t != "":
		r.header(l, strings.TrimPrefix(t, "Uncaught ")) // browsers' console
	case r.valueStart >= 0 && strings.TrimSpace(l.s) != "":
		r.cur.Value = r.text[r.valueStart:l.end()]
	}
}

// frameLine adds a frame to the current error, or to one without a header
// line when the stack starts with frames.
func (r *jsReader) frameLine(rest string) {
	r.valueStart = -1
	f, ok := parseJSFrame(rest)
	if !ok {
		return
	}
	if r.cur == nil {
		r.cur = r.printed.add(Exception{})
	}
	r.cur.Frames = appendInnermostFirst(r.cur.Frames, f)
}

// header starts an error at its "Name: message" line.
func (r *jsReader) header(l line, header string) {
	e, vs := parseJSHeader(header)
	r.cur = r.printed.add(e)
	r.valueStart = offsetIn(l, header, vs)
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
	if !strings.HasSuffix(rest, ")") {
		// A bare location must name a line.
		return f, parseJSLocation(&f, rest) && f.Lineno != 0
	}
	open := openingParen(rest)
	if open <= 0 || rest[open-1] != ' ' {
		return f, false
	}
	f.Function = rest[:open-1]
	return f, parseJSLocation(&f, evalSite(rest[open+1:len(rest)-1]))
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
// "eval at f (/app/a.js:5:3), <anonymous>:1:9" gives "/app/a.js:5:3"; any
// other location is itself.
func evalSite(loc string) string {
	if !strings.HasPrefix(loc, "eval at ") {
		return loc
	}
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

// parseJSLocation reads "file:line:col", or a location that names no file.
func parseJSLocation(f *Frame, loc string) bool {
	if isJSLocationWithoutFile(loc) {
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

// isJSLocationWithoutFile reports "native", "<anonymous>", "unknown
// location" and Promise.all's "index N".
func isJSLocationWithoutFile(loc string) bool {
	return loc == "native" || loc == "<anonymous>" || loc == "unknown location" || strings.HasPrefix(loc, "index ")
}

package stacktrace

import "strings"

// javaException is one exception of a Throwable.printStackTrace text.
type javaException struct {
	typ, module, value string
	// The frames it printed, innermost first: the first MaxFrames and the
	// last ones (at least MaxFrames), all that a complete trace of this or
	// of a cause can use; printed counts them all.
	head, tail []Frame
	printed    int
	// more is the n of "... n more": the outermost n frames of this trace
	// are the outermost n of the trace printed before it (its enclosing
	// trace) and were left out.
	more int
}

func (e *javaException) add(f Frame) {
	e.printed++
	e.head = appendInnermostFirst(e.head, f)
	if e.printed > MaxFrames {
		e.tail = appendInnermostLast(e.tail, f)
	}
}

// frame returns printed frame i, if it was kept.
func (e *javaException) frame(i int) (Frame, bool) {
	if i < len(e.head) {
		return e.head[i], true
	}
	if start := e.printed - len(e.tail); i >= start && i < e.printed {
		return e.tail[i-start], true
	}
	return Frame{}, false
}

// parseJava reads Throwable.printStackTrace output:
//
//	java.lang.IllegalStateException: message
//		at pkg.Class.method(File.java:12)
//		at java.base/java.lang.Thread.run(Thread.java:833)
//		... 3 more
//		Suppressed: ...        (skipped with everything nested under it)
//	Caused by: java.lang.RuntimeException: ...
//
// The caught exception is printed first and its causes after it; Sentry
// lists the root cause first, so the chain is reversed.
func parseJava(text string) []Exception {
	r := javaReader{text: text, valueStart: -1}
	for l := range linesOf(text) {
		r.read(l)
	}
	return resolveJava(r.printed)
}

// javaReader is the state of parseJava between lines.
type javaReader struct {
	text       string
	printed    []javaException
	valueStart int  // offset of the current message while it may go on
	suppressed bool // inside a "Suppressed:" block
}

func (r *javaReader) read(l line) {
	depth, t := indentDepth(l.s)
	cause, isCause := cutJavaCause(depth, t)
	switch {
	case isCause:
		r.suppressed = false
		r.header(l, cause)
	case len(r.printed) == 0:
		if depth == 0 {
			r.header(l, cutThreadPrefix(t))
		}
	case r.inSuppressed(depth):
		// frames and causes of a suppressed exception
	case isJavaIndentedLine(depth, t):
		r.valueStart = -1
		r.indented(t)
	case r.valueStart >= 0 && strings.TrimSpace(l.s) != "":
		// a message printed over several lines
		r.printed[len(r.printed)-1].value = r.text[r.valueStart:l.end()]
	}
}

// cutJavaCause reads an unindented "Caused by: " line.
func cutJavaCause(depth int, t string) (string, bool) {
	if depth != 0 {
		return "", false
	}
	return strings.CutPrefix(t, "Caused by: ")
}

// inSuppressed reports a line of a "Suppressed:" block, or nested deeper
// than the frames: neither is read.
func (r *javaReader) inSuppressed(depth int) bool { return r.suppressed || depth > 1 }

// isJavaIndentedLine reports the lines one level in that are not a
// message's: a frame, "... n more", "Suppressed: ".
func isJavaIndentedLine(depth int, t string) bool {
	return depth == 1 && (strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "... ") || strings.HasPrefix(t, "Suppressed: "))
}

// header starts an exception at its "pkg.Type: message" line.
func (r *javaReader) header(l line, header string) {
	r.valueStart = -1
	if e, vs, ok := parseJavaHeader(header); ok {
		r.printed = append(r.printed, e)
		r.valueStart = offsetIn(l, header, vs)
	}
}

// indented reads a line one level in: a frame, "... n more" or the start
// of a suppressed exception.
func (r *javaReader) indented(t string) {
	cur := &r.printed[len(r.printed)-1]
	switch {
	case strings.HasPrefix(t, "Suppressed: "):
		r.suppressed = true
	case strings.HasPrefix(t, "at "):
		if f, ok := parseJavaFrame(t[len("at "):]); ok {
			cur.add(f)
		}
	case strings.HasPrefix(t, "... "):
		n, _, _ := strings.Cut(t[len("... "):], " ")
		cur.more, _ = atoi(n)
	}
}

// cutThreadPrefix drops the `Exception in thread "main" ` that the
// default uncaught-exception handler prints before the header.
func cutThreadPrefix(t string) string {
	if rest, ok := strings.CutPrefix(t, "Exception in thread "); ok {
		if _, after, ok := strings.Cut(rest, `" `); ok {
			return after
		}
	}
	return t
}

// resolveJava turns the printed chain into Sentry's: root cause first, each
// trace completed with the frames "... n more" left out and trimmed to its
// MaxFrames innermost frames.
func resolveJava(printed []javaException) []Exception {
	full := completeLengths(printed)
	order := make([]int, len(printed))
	for i := range order {
		order[i] = len(printed) - 1 - i
	}
	order = trimChain(order)
	chain := make([]Exception, 0, len(order))
	for _, i := range order {
		e := printed[i]
		chain = append(chain, Exception{
			Type: e.typ, Module: e.module, Value: e.value,
			Frames: innermostFirst(javaFrames(printed, full, i, MaxFrames)),
		})
	}
	return chain
}

// completeLengths is the length of each complete trace: its printed frames
// and the "... n more" it shares with the trace before it, bounded by that
// trace's length (the first trace shares none).
func completeLengths(printed []javaException) []int {
	full := make([]int, len(printed))
	for i := range printed {
		enclosing := 0
		if i > 0 {
			enclosing = full[i-1]
		}
		printed[i].more = min(printed[i].more, enclosing)
		full[i] = printed[i].printed + printed[i].more
	}
	return full
}

// javaFrames returns up to limit frames of the complete trace of exception
// i, innermost first: its printed frames, then the outermost frames of the
// enclosing trace that "... n more" stands for, which may in turn continue
// in the trace enclosing that one. Each step either yields frames or moves
// one exception up, so the work is at most limit + i.
func javaFrames(printed []javaException, full []int, i, limit int) []Frame {
	var frames []Frame
	pos := 0 // index into the complete trace of exception i
	for limit > len(frames) && i >= 0 {
		e := &printed[i]
		if pos >= e.printed {
			if !e.continuesIn(i) {
				break
			}
			// Index pos of trace i is index full[i-1]-more+(pos-printed) of
			// the trace enclosing it.
			pos = full[i-1] - e.more + (pos - e.printed)
			i--
			continue
		}
		f, ok := e.frame(pos)
		if !ok {
			break // in the middle of a trace longer than 2×MaxFrames: not kept
		}
		frames = append(frames, f)
		pos++
	}
	return frames
}

// continuesIn reports whether trace i goes on in the trace enclosing it.
func (e *javaException) continuesIn(i int) bool { return e.more > 0 && i > 0 }

// indentDepth counts a line's indentation in levels: a tab, or four spaces
// as loggers re-indent, is one; t is the line without it.
func indentDepth(s string) (int, string) {
	tabs, spaces := 0, 0
	i := 0
scan:
	for ; i < len(s); i++ {
		switch s[i] {
		case '\t':
			tabs++
		case ' ':
			spaces++
		default:
			break scan
		}
	}
	depth := tabs + (spaces+3)/4
	return depth, s[i:]
}

// offsetIn turns the offset i within tail, a suffix of l, into an offset
// in the text; -1 stays -1.
func offsetIn(l line, tail string, i int) int {
	if i < 0 {
		return -1
	}
	return l.end() - len(tail) + i
}

// parseJavaHeader reads Throwable.toString: "pkg.Class: message" or
// "pkg.Class". valueStart is the offset of the message in s.
func parseJavaHeader(s string) (e javaException, valueStart int, ok bool) {
	name, msg, hasMsg := strings.Cut(s, ": ")
	if !isQualifiedName(name, "$") {
		return e, 0, false
	}
	e.module, e.typ = splitQualified(name)
	if hasMsg {
		e.value = msg
		valueStart = len(name) + len(": ")
	} else {
		valueStart = -1 // no message: nothing continues it
	}
	return e, valueStart, true
}

// parseJavaFrame reads what follows "at " in a Java frame:
//
//	pkg.Class.method(File.java:12)
//	java.base/java.lang.Thread.run(Thread.java:833)   module name
//	app//pkg.Class.method(File.java:12)               class loader name
//	pkg.Class.method(Native Method) / (Unknown Source) / (File.java)
//	pkg.Class.method(File.java:12) ~[app.jar:1.0]     logback packaging data
func parseJavaFrame(rest string) (Frame, bool) {
	var f Frame
	name, src, tail, ok := splitJavaCall(rest)
	if !ok || !parseJavaSource(&f, src) || !parseJavaPackaging(&f, tail) {
		return f, false
	}
	class, method := splitQualified(takeJavaModule(&f, dropHiddenClassSuffix(name)))
	if class == "" || !isQualifiedName(class, "$") {
		return f, false
	}
	f.Module, f.Function = class, method
	return f, true
}

// splitJavaCall cuts "name(src)tail"; false without parentheses or with a
// name that has spaces.
func splitJavaCall(rest string) (name, src, tail string, ok bool) {
	open := strings.IndexByte(rest, '(')
	if open <= 0 {
		return "", "", "", false
	}
	name = rest[:open]
	closing := strings.IndexByte(rest[open:], ')')
	if closing < 0 || strings.ContainsAny(name, " \t") {
		return "", "", "", false
	}
	return name, rest[open+1 : open+closing], rest[open+closing+1:], true
}

// parseJavaSource reads "File.java:12", "File.java", "Native Method" or
// "Unknown Source"; false for parameters, which make a .NET frame.
func parseJavaSource(f *Frame, src string) bool {
	switch {
	case src == "Native Method", src == "Unknown Source":
		return true
	case src == "" || strings.ContainsAny(src, " \t"):
		return false
	}
	f.Filename, f.Lineno, _ = cutTrailingNumber(src)
	return true
}

// parseJavaPackaging reads logback's packaging data after the frame, if any.
func parseJavaPackaging(f *Frame, tail string) bool {
	if tail == "" {
		return true
	}
	jar, ok := packagingData(tail)
	f.Package = jar
	return ok
}

// dropHiddenClassSuffix drops the address of a hidden class:
// "Gen$$Lambda$14/0x0000000800c03000.apply" is "Gen$$Lambda$14.apply".
func dropHiddenClassSuffix(name string) string {
	i := strings.Index(name, "/0x")
	if i <= 0 {
		return name
	}
	if dot := strings.IndexByte(name[i:], '.'); dot > 0 {
		return name[:i] + name[i+dot:]
	}
	return name
}

// takeJavaModule takes the module before a class as the frame's package
// and returns the rest.
func takeJavaModule(f *Frame, name string) string {
	module, rest, ok := cutJavaModule(name)
	if ok && module != "" {
		f.Package = module
	}
	return rest
}

// cutJavaModule cuts the "loader/module@version/", "module@version/" or
// "loader//" before a class, returning the module ("" for a loader alone).
func cutJavaModule(name string) (module, rest string, ok bool) {
	slash := strings.LastIndexByte(name, '/')
	if slash < 0 {
		return "", name, false
	}
	prefix := name[:slash]
	if i := strings.IndexByte(prefix, '/'); i >= 0 {
		prefix = prefix[i+1:]
	}
	module, _, _ = strings.Cut(prefix, "@")
	return module, name[slash+1:], true
}

// packagingData reads logback's " ~[app.jar:1.0]" or " [app.jar:1.0]" after
// a frame and returns the jar.
func packagingData(tail string) (string, bool) {
	t := strings.TrimPrefix(strings.TrimPrefix(tail, " "), "~")
	inner, ok := strings.CutPrefix(t, "[")
	if !ok || !strings.HasSuffix(inner, "]") {
		return "", false
	}
	jar, _, _ := strings.Cut(inner[:len(inner)-1], ":")
	if jar == "na" || jar == "?" {
		jar = ""
	}
	return jar, true
}

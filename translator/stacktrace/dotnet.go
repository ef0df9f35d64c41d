package stacktrace

import "strings"

// The separators Exception.ToString prints between frame blocks.
const (
	dotnetEndOfInner = "--- End of inner exception stack trace ---"
	dotnetEndOfAsync = "--- End of stack trace from previous location"
	dotnetAggregate  = "---> (Inner Exception #"
)

// parseDotNet reads Exception.ToString(), which the OpenTelemetry .NET SDK
// records, as .NET prints it and as Mono does:
//
//	System.InvalidOperationException: outer ---> System.ArgumentException: inner
//	   at Ns.Class.Inner(String s) in /src/Class.cs:line 12
//	   --- End of inner exception stack trace ---
//	   at Ns.Class.Outer() in /src/Class.cs:line 20
//
//	  at Ns.Class.Inner (System.String s) [0x00012] in /src/Class.cs:12     (Mono)
//
// The header lists the exceptions outermost first, joined by " ---> " (a
// message may run over several lines); the frame blocks follow innermost
// exception first, separated by "--- End of inner exception stack trace
// ---". Sentry's order is the blocks' order. Frames print innermost first.
// The "(Inner Exception #N)" list of an AggregateException is not read.
func parseDotNet(text string) []Exception {
	r := dotnetReader{text: text, headerStart: -1, inHeader: true}
	for l := range linesOf(text) {
		if !r.read(l) {
			break
		}
	}
	r.endHeader()
	chain := make([]Exception, 0, len(r.segments))
	for i := len(r.segments) - 1; i >= 0; i-- {
		e := r.segments[i].Exception
		e.Frames = innermostFirst(e.Frames)
		chain = append(chain, e)
	}
	return chain
}

// dotnetReader is the state of parseDotNet between lines.
type dotnetReader struct {
	text                   string
	headerStart, headerEnd int // the header's offsets in text; -1 before it
	inHeader               bool
	segments               []dotnetSegment // the kept ones, outermost first
	total                  int             // segments in the header
	block                  int             // frame blocks ended so far
	cur                    *dotnetSegment  // the owner of the current block
}

// read takes one line; false at an AggregateException's inner list, which
// is not read.
func (r *dotnetReader) read(l line) bool {
	t := strings.TrimLeft(l.s, " \t")
	switch {
	case strings.HasPrefix(t, dotnetAggregate):
		return false
	case t == dotnetEndOfInner:
		r.endHeader()
		r.block++
		r.own()
	case strings.HasPrefix(t, dotnetEndOfAsync):
		r.endHeader()
	case strings.HasPrefix(t, "at "):
		r.frameLine(t[len("at "):])
	case r.inHeader && t != "":
		r.headerLine(l, t)
	}
	return true
}

// frameLine adds a frame to the exception that owns the current block.
func (r *dotnetReader) frameLine(rest string) {
	f, ok := parseDotNetFrame(rest)
	if !ok {
		return
	}
	r.endHeader()
	if r.cur != nil {
		r.cur.Frames = appendInnermostFirst(r.cur.Frames, f)
	}
}

// headerLine extends the header (a message may run over several lines) to
// the end of l.
func (r *dotnetReader) headerLine(l line, t string) {
	if r.headerStart < 0 {
		r.headerStart = l.end() - len(t)
	}
	r.headerEnd = l.end()
}

// endHeader splits the header once its lines have ended.
func (r *dotnetReader) endHeader() {
	if !r.inHeader {
		return
	}
	r.inHeader = false
	header := ""
	if r.headerStart >= 0 {
		header = r.text[r.headerStart:r.headerEnd]
	}
	r.segments, r.total = splitDotNetHeader(header)
	r.own()
}

// own finds the segment that owns the current block: segment i (outermost
// first) owns block total-1-i.
func (r *dotnetReader) own() {
	r.cur = nil
	for i := range r.segments {
		if r.segments[i].index == r.total-1-r.block {
			r.cur = &r.segments[i]
		}
	}
}

// dotnetSegment is one exception of the header and its place in it.
type dotnetSegment struct {
	Exception
	index int // 0 for the outermost
}

// splitDotNetHeader cuts the header at " ---> " and keeps the segments
// Sentry keeps. A text without a header has one exception without a
// type, to own the frames.
func splitDotNetHeader(header string) (kept []dotnetSegment, total int) {
	var keeper chainKeeper[dotnetSegment]
	for {
		seg, rest, more := strings.Cut(header, " ---> ")
		keeper.add(dotnetSegment{Exception: parseDotNetHeader(seg), index: total})
		total++
		if !more {
			break
		}
		header = rest
	}
	return keeper.chain(), total
}

// parseDotNetHeader reads "Ns.TypeName: message"; Sentry's .NET SDK sends
// the full type name as "type". Text that does not start with a type name
// is all message.
func parseDotNetHeader(s string) Exception {
	s = strings.TrimRight(s, "\r\n") // .NET Core starts " ---> " on a line of its own
	name, msg, _ := strings.Cut(s, ": ")
	if !isQualifiedName(name, "`+") {
		return Exception{Value: s}
	}
	return Exception{Type: name, Value: msg}
}

// parseDotNetFrame reads what follows "at " in a .NET or Mono frame:
//
//	Ns.Class.Method(String s) in /src/File.cs:line 12
//	Ns.Class`1.<Run>d__1.MoveNext()
//	Ns.Class.Method (System.String s) [0x00012] in /src/File.cs:12      (Mono)
//	Ns.Class.Method () [0x00000] in <b3a6e1a2c4f8>:0                    (Mono, no symbols)
//	(wrapper managed-to-native) Ns.Class.Method(intptr)                 (Mono)
//
// The type is the module, the method the function. The file line's
// ":line" is localized by .NET; only the English form is read.
func parseDotNetFrame(rest string) (Frame, bool) {
	var f Frame
	call, ok := splitDotNetCall(cutMonoWrapper(rest))
	if !ok || call.looksForeign() || !parseDotNetLocation(&f, call.tail) {
		return f, false
	}
	f.Module, f.Function = splitDotNetMethod(call.name)
	return f, true
}

// cutMonoWrapper drops Mono's "(wrapper managed-to-native) " prefix.
func cutMonoWrapper(rest string) string {
	if !strings.HasPrefix(rest, "(wrapper ") {
		return rest
	}
	if _, after, ok := strings.Cut(rest, ") "); ok {
		return after
	}
	return rest
}

// dotnetCall is a frame cut at its parameter list.
type dotnetCall struct {
	name, params, tail string
	mono               bool // a space before the parameters
}

// splitDotNetCall cuts "Name(params) tail" (or Mono's "Name (params)
// tail"); false when there is no parameter list after a name without
// spaces.
func splitDotNetCall(rest string) (dotnetCall, bool) {
	open := strings.IndexByte(rest, '(')
	if open <= 0 {
		return dotnetCall{}, false
	}
	name := strings.TrimRight(rest[:open], " ")
	closing := strings.IndexByte(rest[open:], ')')
	if closing < 0 || name == "" || strings.ContainsAny(name, " \t") {
		return dotnetCall{}, false
	}
	return dotnetCall{name: name, params: rest[open+1 : open+closing],
		tail: strings.TrimSpace(rest[open+closing+1:]), mono: rest[open-1] == ' '}, true
}

// looksForeign reports a V8 or Java frame: nothing after the parentheses,
// which hold a location rather than parameters.
func (c dotnetCall) looksForeign() bool {
	if c.tail != "" {
		return false
	}
	return c.mono || (c.params != "" && !strings.Contains(c.params, " ")) ||
		c.params == "Native Method" || c.params == "Unknown Source"
}

// splitDotNetMethod splits "Ns.Class.Method" at its last dot, keeping a
// constructor's ("Ns.Class..ctor") dot with the method.
func splitDotNetMethod(name string) (module, function string) {
	dot := strings.LastIndexByte(name, '.')
	if dot > 0 && name[dot-1] == '.' {
		dot--
	}
	if dot <= 0 {
		return "", name
	}
	return name[:dot], name[dot+1:]
}

// parseDotNetLocation reads what follows the parameters: nothing, "in
// path:line 12", or Mono's "[0x00012] in path:12" ("<filename unknown>" and
// "<mvid>" name no file).
func parseDotNetLocation(f *Frame, tail string) bool {
	tail, ok := cutILOffset(tail)
	if !ok {
		return false
	}
	if tail == "" {
		return true
	}
	loc, ok := strings.CutPrefix(tail, "in ")
	if !ok {
		return false
	}
	file, lineno, ok := cutDotNetLine(loc)
	if !ok || isUnnamedFile(file) {
		// A localized ":line" (":Zeile 12"): the frame without its file;
		// no symbols: no file, and the line printed is 0.
		return true
	}
	f.Filename, f.Lineno = file, lineno
	if isAbsPath(file) {
		f.AbsPath = file
	}
	return true
}

// cutILOffset drops Mono's "[0x00012] " or "<0x00012> "; false when it is
// not closed.
func cutILOffset(tail string) (string, bool) {
	if !strings.HasPrefix(tail, "[0x") && !strings.HasPrefix(tail, "<0x") {
		return tail, true
	}
	end := strings.IndexAny(tail, "]>")
	if end < 0 {
		return "", false
	}
	return strings.TrimSpace(tail[end+1:]), true
}

// cutDotNetLine splits .NET's "path:line 12" or Mono's "path:12".
func cutDotNetLine(loc string) (string, int, bool) {
	if file, num, isCore := strings.Cut(loc, ":line "); isCore {
		lineno, ok := atoi(num)
		return file, lineno, ok
	}
	return cutTrailingNumber(loc)
}

// isUnnamedFile reports Mono's "<filename unknown>" and "<mvid>".
func isUnnamedFile(file string) bool {
	return strings.HasPrefix(file, "<") && strings.HasSuffix(file, ">")
}

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
	var (
		headerStart, headerEnd = -1, -1
		inHeader               = true
		segments               []dotnetSegment // the kept ones, outermost first
		total                  int             // segments in the header
		block                  int             // frame blocks ended so far
		cur                    *dotnetSegment  // the owner of the current block
	)
	// own finds the segment that owns the current block: segment i
	// (outermost first) owns block total-1-i.
	own := func() {
		cur = nil
		for i := range segments {
			if segments[i].index == total-1-block {
				cur = &segments[i]
			}
		}
	}
	endHeader := func() {
		if !inHeader {
			return
		}
		inHeader = false
		header := ""
		if headerStart >= 0 {
			header = text[headerStart:headerEnd]
		}
		segments, total = splitDotNetHeader(header)
		own()
	}
	for l := range linesOf(text) {
		t := strings.TrimLeft(l.s, " \t")
		if strings.HasPrefix(t, dotnetAggregate) {
			break
		}
		switch {
		case t == dotnetEndOfInner:
			endHeader()
			block++
			own()
		case strings.HasPrefix(t, dotnetEndOfAsync):
			endHeader()
		case strings.HasPrefix(t, "at "):
			if f, ok := parseDotNetFrame(t[len("at "):]); ok {
				endHeader()
				if cur != nil {
					cur.Frames = appendInnermostFirst(cur.Frames, f)
				}
			}
		case inHeader && t != "":
			if headerStart < 0 {
				headerStart = l.end() - len(t)
			}
			headerEnd = l.end()
		}
	}
	endHeader()
	chain := make([]Exception, 0, len(segments))
	for i := len(segments) - 1; i >= 0; i-- {
		e := segments[i].Exception
		e.Frames = innermostFirst(e.Frames)
		chain = append(chain, e)
	}
	return chain
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
	if strings.HasPrefix(rest, "(wrapper ") {
		if _, after, ok := strings.Cut(rest, ") "); ok {
			rest = after
		}
	}
	open := strings.IndexByte(rest, '(')
	if open <= 0 {
		return f, false
	}
	mono := rest[open-1] == ' '
	name := strings.TrimRight(rest[:open], " ")
	closing := strings.IndexByte(rest[open:], ')')
	if closing < 0 || name == "" || strings.ContainsAny(name, " \t") {
		return f, false
	}
	params := rest[open+1 : open+closing]
	tail := strings.TrimSpace(rest[open+closing+1:])
	if tail == "" && (mono || (params != "" && !strings.Contains(params, " ")) ||
		params == "Native Method" || params == "Unknown Source") {
		return f, false // a V8 or Java frame
	}
	if !parseDotNetLocation(&f, tail) {
		return f, false
	}
	dot := strings.LastIndexByte(name, '.')
	if dot > 0 && name[dot-1] == '.' { // "Ns.Class..ctor"
		dot--
	}
	if dot > 0 {
		f.Module, f.Function = name[:dot], name[dot+1:]
	} else {
		f.Function = name
	}
	return f, true
}

// parseDotNetLocation reads what follows the parameters: nothing, "in
// path:line 12", or Mono's "[0x00012] in path:12" ("<filename unknown>" and
// "<mvid>" name no file).
func parseDotNetLocation(f *Frame, tail string) bool {
	if strings.HasPrefix(tail, "[0x") || strings.HasPrefix(tail, "<0x") {
		end := strings.IndexAny(tail, "]>")
		if end < 0 {
			return false
		}
		tail = strings.TrimSpace(tail[end+1:])
	}
	if tail == "" {
		return true
	}
	loc, ok := strings.CutPrefix(tail, "in ")
	if !ok {
		return false
	}
	file, num, isCore := strings.Cut(loc, ":line ")
	var lineno int
	if isCore {
		lineno, ok = atoi(num)
	} else {
		file, lineno, ok = cutTrailingNumber(loc)
	}
	if !ok {
		return true // a localized ":line" (":Zeile 12"): the frame without its file
	}
	if strings.HasPrefix(file, "<") && strings.HasSuffix(file, ">") {
		return true // no symbols: no file, and the line printed is 0
	}
	f.Filename, f.Lineno = file, lineno
	if isAbsPath(file) {
		f.AbsPath = file
	}
	return true
}

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
func parseDotNet(text string, lines []line) []Exception {
	headerFirst, headerLast := -1, -1
	blocks := [][]Frame{nil}
	inHeader := true
	for i, l := range lines {
		t := strings.TrimLeft(l.s, " \t")
		if strings.HasPrefix(t, dotnetAggregate) {
			break
		}
		switch {
		case t == dotnetEndOfInner:
			inHeader = false
			blocks = append(blocks, nil)
		case strings.HasPrefix(t, dotnetEndOfAsync):
			inHeader = false
		case strings.HasPrefix(t, "at "):
			if f, ok := parseDotNetFrame(t[len("at "):]); ok {
				inHeader = false
				blocks[len(blocks)-1] = append(blocks[len(blocks)-1], f)
			}
		case inHeader && t != "":
			if headerFirst < 0 {
				headerFirst = i
			}
			headerLast = i
		}
	}
	var segments []string
	if headerFirst >= 0 {
		header := text[lines[headerFirst].start:lines[headerLast].end()]
		segments = strings.Split(strings.TrimLeft(header, " \t"), " ---> ")
	}
	// Segment i (outermost first) owns block len(blocks)-1-i.
	chain := make([]Exception, 0, max(len(segments), 1))
	for i := len(segments) - 1; i >= 0; i-- {
		e := parseDotNetHeader(segments[i])
		if b := len(blocks) - 1 - i; b >= 0 {
			e.Frames = blocks[b]
		}
		chain = append(chain, e)
	}
	if len(chain) == 0 && len(blocks[0]) > 0 { // frames without a header
		chain = append(chain, Exception{Frames: blocks[0]})
	}
	chain = trimChain(chain)
	for i := range chain {
		chain[i].Frames = innermostFirst(chain[i].Frames)
	}
	return chain
}

// parseDotNetHeader reads "Ns.TypeName: message"; Sentry's .NET SDK sends
// the full type name as "type". Text that does not start with a type name
// is all message.
func parseDotNetHeader(s string) Exception {
	name, msg, _ := strings.Cut(s, ": ")
	if !isDotNetName(name) {
		return Exception{Value: s}
	}
	return Exception{Type: name, Value: msg}
}

func isDotNetName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '.' || c == '_' || c == '`' || c == '+' || c >= 0x80 ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
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
		return false
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

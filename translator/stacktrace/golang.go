package stacktrace

import "strings"

// parseGo reads a goroutine trace, as runtime.Stack and runtime/debug.Stack
// print it (the OpenTelemetry Go SDK records runtime.Stack text) and as the
// runtime prints it for a panic or a fatal error:
//
//	panic: first [recovered]
//		panic: second
//
//	goroutine 1 [running]:
//	main.(*store).get(0xc000012345, {0x4c4a4e, 0x5})
//		/app/main.go:21 +0x45
//	main.box[...].open(...)
//		/app/main.go:28
//	created by main.main in goroutine 1
//		/app/main.go:30 +0x25
//
// Only the first goroutine is read: it is the one that panicked or called
// Stack. "created by" (where the goroutine was started, not a caller) is not
// a frame. The panics are printed oldest first, Sentry's order; the frames
// belong to the last one. A trace without a panic line is one exception
// with no type or value: the caller has them from exception.type and
// exception.message.
func parseGo(text string) []Exception {
	r := goReader{text: text, valueStart: -1}
	for l := range linesOf(text) {
		if !r.read(l) {
			break
		}
	}
	r.flush()
	if r.chain.n == 0 {
		if len(r.frames) == 0 {
			return nil
		}
		r.chain.add(Exception{})
	}
	kept := r.chain.chain()
	kept[len(kept)-1].Frames = innermostFirst(r.frames)
	return kept
}

// goReader is the state of parseGo between lines.
type goReader struct {
	text        string
	chain       chainKeeper[Exception]
	cur         *Exception
	frames      []Frame
	inGoroutine bool
	pending     Frame // a function line waiting for its file line
	isPending   bool
	valueStart  int
}

// read takes one line; false when the first goroutine's trace has ended.
func (r *goReader) read(l line) bool {
	s := l.s
	switch {
	case isGoroutineHeader(s):
		return r.goroutineHeader()
	case !r.inGoroutine:
		r.panicLine(l)
	case s == "":
		return r.beforeFrames()
	case strings.HasPrefix(s, "\t"):
		r.fileLine(l)
	case isGoNonFrameLine(s):
		r.isPending = false
	case isGoFunctionLine(s) || l.final:
		// The last line may be cut anywhere: runtime.Stack stops at the
		// end of its buffer.
		r.pending, r.isPending = Frame{}, true
		parseGoFunction(&r.pending, s)
	default:
		return false // not a goroutine trace any more
	}
	return true
}

// beforeFrames reports whether no frame was read yet: an empty line then
// does not end the trace.
func (r *goReader) beforeFrames() bool { return len(r.frames) == 0 && !r.isPending }

// isGoNonFrameLine reports "created by …" (where the goroutine was started,
// not a caller) and "...additional frames elided...".
func isGoNonFrameLine(s string) bool {
	return strings.HasPrefix(s, "created by ") || strings.HasPrefix(s, "...")
}

// goroutineHeader starts the first goroutine; false at the next one.
func (r *goReader) goroutineHeader() bool {
	if r.inGoroutine {
		return false
	}
	r.inGoroutine, r.valueStart = true, -1
	return true
}

// panicLine reads what comes before the goroutine: panics and the lines of
// their messages.
func (r *goReader) panicLine(l line) {
	s := l.s
	if e, vs, ok := parseGoPanic(s); ok {
		r.cur = r.chain.add(e)
		r.valueStart = offsetIn(l, s, vs)
	} else if r.valueStart >= 0 && continuesGoMessage(s) {
		r.cur.Value = r.text[r.valueStart:l.end()] // a message printed over several lines
	}
}

// continuesGoMessage reports whether a line before the goroutine goes on
// with a panic's message: it has text, and is not the runtime's
// "[signal SIGSEGV…]" line.
func continuesGoMessage(s string) bool {
	return strings.TrimSpace(s) != "" && !strings.HasPrefix(s, "[signal ")
}

// fileLine completes the pending frame with "\t/path/file.go:12 +0x1d".
func (r *goReader) fileLine(l line) {
	if !r.isPending {
		return
	}
	parseGoFileLine(&r.pending, l.s[1:])
	if l.final && !strings.Contains(l.s, " +0x") {
		r.pending.Lineno = 0 // the text may have been cut inside the number
	}
	r.flush()
}

func (r *goReader) flush() {
	if r.isPending {
		r.frames = appendInnermostFirst(r.frames, r.pending)
		r.isPending = false
	}
}

// parseGoPanic reads "panic: message", a re-panic "\tpanic: message" and
// "fatal error: message".
func parseGoPanic(s string) (e Exception, valueStart int, ok bool) {
	t := strings.TrimPrefix(s, "\t")
	for _, typ := range []string{"panic", "fatal error"} {
		if msg, ok := strings.CutPrefix(t, typ+": "); ok {
			return Exception{Type: typ, Value: msg}, len(s) - len(msg), true
		}
	}
	return e, -1, false
}

// isGoFunctionLine reports whether s is a function line of a goroutine
// trace: a name and its arguments in parentheses, at the start of the line.
func isGoFunctionLine(s string) bool {
	return s != "" && s[0] != ' ' && s[0] != '\t' && strings.HasSuffix(s, ")") && strings.IndexByte(s, '(') > 0
}

// parseGoFunction reads "pkg/path.(*T).m(args)": the package path is the
// module, the rest the function. Dots in the last element of a package path
// are printed as %2e, so the first dot after the last slash ends the path.
func parseGoFunction(f *Frame, s string) {
	name := s
	// The arguments follow the last "(" (a receiver's "(*T)" comes before
	// it); a line cut short may have lost the ")".
	if open := strings.LastIndexByte(name, '('); open > 0 && name[open-1] != '.' {
		name = name[:open]
	}
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot > 0 {
		f.Module, f.Function = name[:slash+1+dot], name[slash+1+dot+1:]
		return
	}
	f.Function = name
}

// parseGoFileLine reads "/app/main.go:21 +0x45" (the offset is absent for
// inlined frames; GOTRACEBACK=crash adds " fp=... sp=... pc=...").
func parseGoFileLine(f *Frame, s string) {
	if i := strings.Index(s, " +0x"); i >= 0 {
		s = s[:i]
	} else if i := strings.Index(s, " fp="); i >= 0 {
		s = s[:i]
	}
	file, lineno, ok := cutTrailingNumber(s)
	if !ok {
		return
	}
	f.Filename, f.Lineno = file, lineno
	if isAbsPath(file) {
		f.AbsPath = file
	}
}

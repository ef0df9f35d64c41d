package stacktrace

import "strings"

// The lines Python prints between the exceptions of a chain.
const (
	pythonCause   = "The above exception was the direct cause of the following exception:"
	pythonContext = "During handling of the above exception, another exception occurred:"
)

// pythonFrame is a frame of a traceback and how many more times Python
// said it repeats ("[Previous line repeated 27 more times]").
type pythonFrame struct {
	Frame
	repeat int
}

// appendPythonFrame keeps the entries that can still be among the
// MaxFrames innermost frames: each entry is at least one frame, so when
// 2×MaxFrames are held the oldest MaxFrames can go at once.
func appendPythonFrame(frames []pythonFrame, f Frame) []pythonFrame {
	if len(frames) == 2*MaxFrames {
		frames = frames[:copy(frames, frames[MaxFrames:])]
	}
	return append(frames, pythonFrame{Frame: f})
}

// expandPython returns the MaxFrames innermost frames, the repeated ones
// spelled out as Python would have printed them without collapsing.
func expandPython(frames []pythonFrame) []Frame {
	first, n := innermostEntries(frames)
	out := make([]Frame, 0, min(n, MaxFrames))
	skip := max(n-MaxFrames, 0) // the oldest entry may be kept in part
	for _, f := range frames[first:] {
		times := 1 + f.repeat - min(skip, 1+f.repeat)
		skip -= 1 + f.repeat - times
		for range times {
			out = append(out, f.Frame)
		}
	}
	return out
}

// innermostEntries finds the first of the entries that hold the MaxFrames
// innermost frames, and how many frames they spell out.
func innermostEntries(frames []pythonFrame) (first, n int) {
	first = len(frames)
	for first > 0 && n < MaxFrames {
		first--
		n += 1 + frames[first].repeat
	}
	return first, n
}

type pythonState int

const (
	pythonOutside pythonState = iota // before a traceback or after a separator
	pythonFrames                     // after "Traceback (most recent call last):"
	pythonMessage                    // after the exception line
)

// parsePython reads traceback.format_exception output:
//
//	Traceback (most recent call last):
//	  File "/app/x.py", line 3, in f
//	    return parse(doc)
//	           ^^^^^^^^^^
//	json.decoder.JSONDecodeError: message
//
//	The above exception was the direct cause of the following exception:
//
//	Traceback (most recent call last):
//	...
//
// Python prints the root cause first and every traceback innermost last,
// Sentry's order for both. Exception groups ("| "-prefixed tracebacks) are
// not read.
func parsePython(text string) []Exception {
	r := pythonReader{text: text, first: true}
	for l := range linesOf(text) {
		r.read(l)
	}
	kept := r.chain.chain()
	out := make([]Exception, len(kept))
	for i, e := range kept {
		out[i] = e.Exception
		out[i].Frames = expandPython(e.frames)
	}
	return out
}

// pythonReader is the state of parsePython between lines.
type pythonReader struct {
	text       string
	chain      chainKeeper[pythonException]
	cur        *pythonException
	frames     []pythonFrame // of the traceback being read
	state      pythonState
	seen       bool // a traceback or a separator was read
	first      bool // no line with text was read yet
	valueStart int
}

func (r *pythonReader) read(l line) {
	s := l.s
	atFirst := r.atFirstText(s)
	switch {
	case strings.HasPrefix(s, "Traceback (most recent call last):"):
		r.state, r.seen, r.frames = pythonFrames, true, nil
	case isChainSeparator(s):
		r.state, r.seen, r.frames = pythonOutside, true, nil
	case r.inFrames(s):
		r.frameLine(s)
	case r.expectsException(atFirst) && isUnindentedText(s):
		r.exceptionLine(l)
	case r.continuesMessage(s):
		// a message printed over several lines, or notes added to it
		r.cur.Value = r.text[r.valueStart:l.end()]
	}
}

// atFirstText reports whether s is the first line with text. A cause that
// was never raised prints no traceback, so that line may be an exception
// line.
func (r *pythonReader) atFirstText(s string) bool {
	if !r.first || strings.TrimSpace(s) == "" {
		return false
	}
	r.first = false
	return true
}

// expectsException reports whether an unindented line can be an exception
// line: after a traceback or a separator, or first in the text.
func (r *pythonReader) expectsException(atFirst bool) bool {
	return r.state != pythonMessage && (r.seen || atFirst)
}

// isChainSeparator reports the line Python prints between the exceptions
// of a chain.
func isChainSeparator(s string) bool { return s == pythonCause || s == pythonContext }

// inFrames reports an indented line of a traceback being read.
func (r *pythonReader) inFrames(s string) bool {
	return r.state == pythonFrames && strings.HasPrefix(s, "  ")
}

// continuesMessage reports a line with text after an exception line that
// has a message.
func (r *pythonReader) continuesMessage(s string) bool {
	return r.state == pythonMessage && r.valueStart >= 0 && strings.TrimSpace(s) != ""
}

func isUnindentedText(s string) bool { return s != "" && s[0] != ' ' }

// frameLine reads an indented line of a traceback: a frame, the code
// under it, the carets under the code, or a note that the previous frame
// repeats.
func (r *pythonReader) frameLine(s string) {
	if rest, ok := strings.CutPrefix(s, `  File "`); ok {
		if f, ok := parsePythonFrame(rest); ok {
			r.frames = appendPythonFrame(r.frames, f)
		}
		return
	}
	if len(r.frames) == 0 {
		return
	}
	last := &r.frames[len(r.frames)-1]
	if rest, ok := strings.CutPrefix(s, "  [Previous line repeated "); ok {
		last.addRepeats(rest)
		return
	}
	last.addCode(s)
}

// addCode keeps the first line of code printed under a frame (indented
// four spaces), not the carets under it.
func (f *pythonFrame) addCode(s string) {
	if code := strings.TrimSpace(s); strings.HasPrefix(s, "    ") && f.ContextLine == "" && !isCaretLine(code) {
		f.ContextLine = code
	}
}

// addRepeats reads the "N more times]" of a repeat note.
func (f *pythonFrame) addRepeats(note string) {
	count, _, _ := strings.Cut(note, " ")
	if times, ok := atoi(count); ok {
		// More than MaxFrames repeats would all fall out of the kept
		// frames: no need to count further.
		f.repeat = min(f.repeat+times, MaxFrames)
	}
}

// exceptionLine reads "pkg.Error: message", which ends a traceback.
func (r *pythonReader) exceptionLine(l line) {
	e, vs, ok := parsePythonExceptionLine(l.s)
	if !ok {
		return
	}
	r.cur = r.chain.add(pythonException{Exception: e, frames: r.frames})
	r.state, r.frames = pythonMessage, nil
	r.valueStart = offsetIn(l, l.s, vs)
}

// pythonException is an exception of the chain while it is read; its
// frames are spelled out only if it is kept.
type pythonException struct {
	Exception
	frames []pythonFrame
}

// parsePythonFrame reads what follows `  File "`:
// `/app/x.py", line 3, in f` (or without ", in f" for a SyntaxError).
func parsePythonFrame(rest string) (Frame, bool) {
	var f Frame
	path, after, ok := strings.Cut(rest, `", line `)
	if !ok || path == "" {
		return f, false
	}
	num, fn, _ := strings.Cut(after, ", in ")
	lineno, ok := atoi(num)
	if !ok {
		return f, false
	}
	f.Function, f.Filename, f.Lineno = fn, path, lineno
	if isAbsPath(path) {
		f.AbsPath = path
	}
	return f, true
}

// parsePythonExceptionLine reads "pkg.mod.Error: message" or "Error", as
// traceback.format_exception_only prints them; the module of the type is
// printed unless it is builtins or __main__. valueStart is the message's
// offset in s, -1 when there is none.
func parsePythonExceptionLine(s string) (e Exception, valueStart int, ok bool) {
	name, msg, hasMsg := strings.Cut(s, ": ")
	if !isQualifiedName(name, "") {
		return e, -1, false
	}
	e.Module, e.Type = splitQualified(name)
	if !hasMsg {
		return e, -1, true
	}
	e.Value = msg
	return e, len(name) + len(": "), true
}

// isCaretLine reports whether s is the "^^^^" / "~~^^" line Python 3.11+
// prints under the code of a frame.
func isCaretLine(s string) bool {
	return s != "" && strings.Trim(s, "^~ ") == ""
}

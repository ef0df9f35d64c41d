// Package stacktrace reads the stack-trace text that OpenTelemetry SDKs write
// into the exception.stacktrace attribute and returns it as the exception
// chain of a Sentry error event (exception.values[] with
// stacktrace.frames[]).
//
// The text is whatever the runtime prints: Throwable.printStackTrace (Java),
// traceback.format_exception (Python), Error.stack or util.inspect (V8),
// runtime.Stack or a panic (Go), Exception.ToString (.NET and Mono) and
// Exception#full_message (Ruby). Each language has its own file; Parse picks
// the language from the first line that only that language prints.
package stacktrace

import (
	"iter"
	"strings"
)

// Frame is one frame as Sentry's event protocol names its fields
// (exception.values[].stacktrace.frames[]).
type Frame struct {
	Function string // "function"
	Module   string // "module": Java/.NET class or namespace, Python module, Go package path
	Filename string // "filename" (as printed, e.g. "Main.java", "app.py", "/src/app/main.go")
	AbsPath  string // "abs_path" where the text has a full path or URL
	Lineno   int    // "lineno", 0 when absent
	Colno    int    // "colno", 0 when absent
	Package  string // "package": a native module / jar / assembly when printed
	InApp    *bool  // set by the caller (in_app prefixes), nil here
	// ContextLine is "context_line": the source line Python prints under
	// its frame, without its indentation; empty for the other languages.
	ContextLine string
}

// Exception is one exception of a chain as the text shows it.
//
// Type and Module follow what each platform's Sentry SDK sends: a Java or
// Python qualified type is split at its last dot ("java.lang" +
// "IllegalStateException", "json.decoder" + "JSONDecodeError"), a .NET type
// keeps its full name ("System.InvalidOperationException"), V8 and Ruby
// print no module. Type is empty when the text names none (a Go trace
// without a panic line, a Ruby "unhandled exception").
type Exception struct {
	Type   string  // "type"   e.g. "IllegalStateException", "ValueError", "TypeError", "panic"
	Value  string  // "value"  the message
	Module string  // "module" for Python/Java-style qualified types when split
	Frames []Frame // innermost LAST, as Sentry orders frames
}

// Language is the runtime whose printing Parse recognised.
type Language string

// The languages Parse recognises; "" when it recognised none.
const (
	Java       Language = "java"
	Python     Language = "python"
	JavaScript Language = "javascript"
	Go         Language = "go"
	DotNet     Language = "dotnet"
	Ruby       Language = "ruby"
)

const (
	// MaxFrames bounds the frames of one exception. Relay's trimming
	// processor keeps the last 250 frames of a stack trace (the innermost
	// ones, since Sentry lists the innermost last) and drops the rest;
	// Parse keeps the same ones.
	MaxFrames = 250
	// MaxExceptions bounds the exceptions of one chain. Sentry's
	// trim_exceptions (SENTRY_MAX_EXCEPTIONS = 25) keeps the first and the
	// last 12 of a longer chain and drops the middle; Parse does the same,
	// so the root cause and the exception that was caught both survive.
	MaxExceptions = 25
)

// Parse reads a stack trace as an OTel SDK writes it in exception.stacktrace
// and returns the chain in the order of Sentry's exception.values: oldest
// first, so the root cause comes first and the exception that was caught
// (the one the attribute belongs to) comes last. Frames are ordered as in
// Sentry, the innermost (the one that raised) last.
//
// ok is false when no language was recognised or no exception could be read;
// the caller then keeps the text as it is. Parse never panics, its work is
// linear in len(text), and it keeps at most MaxFrames frames per exception
// and MaxExceptions exceptions per chain. Strings in the result share
// memory with text.
func Parse(text string) (chain []Exception, lang Language, ok bool) {
	lang = detect(text)
	parse := parserOf(lang)
	if parse == nil {
		return nil, lang, false
	}
	chain = parse(text)
	if !readSomething(chain) {
		return nil, lang, false
	}
	return chain, lang, true
}

// parserOf is the reader of a language's printing; nil for none.
func parserOf(lang Language) func(string) []Exception {
	return parsers[lang]
}

// parsers reads each language's printing, one file each.
var parsers = map[Language]func(string) []Exception{
	Java:       parseJava,
	Python:     parsePython,
	JavaScript: parseJavaScript,
	Go:         parseGo,
	DotNet:     parseDotNet,
	Ruby:       parseRuby,
}

// readSomething reports whether a chain holds a frame or a type: else the
// text was not a trace of its language after all.
func readSomething(chain []Exception) bool {
	for _, e := range chain {
		if len(e.Frames) > 0 || e.Type != "" {
			return true
		}
	}
	return false
}

// line is one line of the text and the offset where it starts, so that a
// message printed over several lines is taken as one slice of the text
// rather than joined (joining line by line would be quadratic).
type line struct {
	s     string // without its "\n" and a trailing "\r"
	start int    // offset of s in the text
	final bool   // no "\n" follows it
}

// end is the offset just past the line's text.
func (l line) end() int { return l.start + len(l.s) }

// linesOf yields the lines of text one by one, without holding them all.
func linesOf(text string) iter.Seq[line] {
	return func(yield func(line) bool) {
		for start := 0; start <= len(text); {
			n := strings.IndexByte(text[start:], '\n')
			final := n < 0
			if final {
				n = len(text) - start
			}
			if !yield(line{s: strings.TrimSuffix(text[start:start+n], "\r"), start: start, final: final}) {
				return
			}
			start += n + 1
		}
	}
}

// The bounded collections below keep what Sentry keeps while the text is
// read, so a trace of a million frames or exceptions costs the memory of
// MaxFrames frames and MaxExceptions exceptions, not of the trace.

// appendInnermostFirst collects frames printed innermost first (Java, V8,
// Go, .NET, Ruby): Relay keeps the innermost MaxFrames, the first printed.
func appendInnermostFirst(frames []Frame, f Frame) []Frame {
	if len(frames) >= MaxFrames {
		return frames
	}
	return append(frames, f)
}

// appendInnermostLast keeps the last MaxFrames (or more) of frames read one
// by one: it holds at most 2×MaxFrames, dropping the oldest MaxFrames at
// once so that the work per frame stays constant.
func appendInnermostLast(frames []Frame, f Frame) []Frame {
	if len(frames) == 2*MaxFrames {
		frames = frames[:copy(frames, frames[MaxFrames:])]
	}
	return append(frames, f)
}

// innermostFirst orders frames printed innermost first as Sentry does,
// innermost last, keeping the MaxFrames innermost ones.
func innermostFirst(printed []Frame) []Frame {
	if len(printed) > MaxFrames {
		printed = printed[:MaxFrames]
	}
	frames := make([]Frame, len(printed))
	for i, f := range printed {
		frames[len(printed)-1-i] = f
	}
	return frames
}

const (
	keepFirst = MaxExceptions / 2         // trim_exceptions keeps this many at each end
	keepRing  = MaxExceptions - keepFirst // a chain of exactly MaxExceptions is kept whole
)

// chainKeeper holds what Sentry's trim_exceptions keeps of a chain read one
// exception at a time: the first and the last MaxExceptions/2 when the
// chain is longer than MaxExceptions, all of it otherwise. The rule is the
// same read from either end, so it works in printed order.
type chainKeeper[T any] struct {
	first []T
	ring  []T // the latest ones; ring[next] is the oldest once it is full
	next  int
	n     int
}

// add keeps e for now and returns where it is kept, valid until the next
// add, so the parser can go on filling it in.
func (k *chainKeeper[T]) add(e T) *T {
	k.n++
	if k.first == nil {
		k.first = make([]T, 0, keepFirst)
	}
	if len(k.first) < keepFirst {
		k.first = append(k.first, e)
		return &k.first[len(k.first)-1]
	}
	if len(k.ring) < keepRing {
		k.ring = append(k.ring, e)
		return &k.ring[len(k.ring)-1]
	}
	slot := &k.ring[k.next]
	*slot = e
	k.next = (k.next + 1) % keepRing
	return slot
}

// chain returns the kept exceptions in the order they were added.
func (k *chainKeeper[T]) chain() []T {
	out := make([]T, 0, len(k.first)+len(k.ring))
	out = append(out, k.first...)
	ring := append(append(make([]T, 0, len(k.ring)), k.ring[k.next:]...), k.ring[:k.next]...)
	if k.n > MaxExceptions {
		ring = ring[len(ring)-keepFirst:]
	}
	return append(out, ring...)
}

// trimChain applies the same rule to a chain held whole (Java's, whose
// traces refer to each other).
func trimChain[T any](chain []T) []T {
	if len(chain) <= MaxExceptions {
		return chain
	}
	return append(chain[:keepFirst:keepFirst], chain[len(chain)-keepFirst:]...)
}

// reverse reverses a chain printed newest first into Sentry's order.
func reverse[T any](chain []T) []T {
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// splitQualified splits "a.b.C" into "a.b" and "C"; a name without a dot is
// all name.
func splitQualified(name string) (module, last string) {
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// isQualifiedName reports whether s is a dotted name of identifiers, such
// as a Java class, a Python type or a .NET type; extra lists the bytes a
// language allows besides letters, digits and "_" ("$" in Java and
// JavaScript, "`" and "+" in .NET). Bytes of UTF-8 sequences count as
// letters.
func isQualifiedName(s, extra string) bool {
	if !hasNameEnds(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], extra) {
			return false
		}
	}
	return true
}

// hasNameEnds reports whether s can start and end a dotted name: not
// empty, no dot at either end, no digit first.
func hasNameEnds(s string) bool {
	return s != "" && s[0] != '.' && s[len(s)-1] != '.' && !isDigit(s[0])
}

// isNameByte reports the bytes of a dotted name: identifier bytes, dots and
// the language's extra ones.
func isNameByte(c byte, extra string) bool {
	return isIdentByte(c) || c == '.' || strings.IndexByte(extra, c) >= 0
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 0x80 || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isAbsPath reports whether a printed file name is a full path or a URL,
// which Sentry takes as "abs_path".
func isAbsPath(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) || isWindowsDrivePath(p) ||
		strings.Contains(p, "://") || strings.HasPrefix(p, "file:")
}

// isWindowsDrivePath reports "C:\..." and "C:/...".
func isWindowsDrivePath(p string) bool {
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// atoi reads a non-negative decimal number of at most 9 digits (line and
// column numbers); ok is false for anything else.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 || strings.IndexFunc(s, notDigitRune) >= 0 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func notDigitRune(r rune) bool { return r < '0' || r > '9' }

// cutTrailingNumber splits "x:12" into "x" and 12.
func cutTrailingNumber(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	n, ok := atoi(s[i+1:])
	if !ok {
		return s, 0, false
	}
	return s[:i], n, true
}

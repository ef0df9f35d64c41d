package sentryevent

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// exception is what the semantic conventions take of one entry of
// "exception.values".
type exception struct {
	typ, value string
	synthetic  bool
	frames     []frame // oldest call first, as Sentry orders them
}

// frame is what the stack trace text shows of one frame.
type frame struct {
	function, file  string
	lineno, colno   int64
	hasLine, hasCol bool
}

// frameOf reads a frame's "function", its file (see frameFile),
// "lineno" and "colno".
func frameOf(f map[string]any) frame {
	fr := frame{function: sentrysignal.Str(f, "function"), file: frameFile(f)}
	fr.lineno, fr.hasLine = sentrysignal.Int(f, "lineno")
	fr.colno, fr.hasCol = sentrysignal.Int(f, "colno")
	return fr
}

// exceptionChain is "exception.values": oldest first, so the last entry is
// the exception that was raised to the handler.
type exceptionChain []exception

func readExceptions(doc map[string]any) exceptionChain {
	values := sentrysignal.Values(doc["exception"])
	chain := make(exceptionChain, 0, len(values))
	for _, v := range values {
		if e, ok := v.(map[string]any); ok {
			chain = append(chain, readException(e))
		}
	}
	return chain
}

// readException reads one entry of "exception.values": "type", "value",
// mechanism.synthetic and the frames of "stacktrace".
func readException(e map[string]any) exception {
	synthetic, _ := sentrysignal.Bool(sentrysignal.Obj(e, "mechanism"), "synthetic")
	ex := exception{typ: sentrysignal.Str(e, "type"), value: sentrysignal.Text(e, "value"), synthetic: synthetic}
	for _, f := range sentrysignal.Arr(sentrysignal.Obj(e, "stacktrace"), "frames") {
		if fm, ok := f.(map[string]any); ok {
			ex.frames = append(ex.frames, frameOf(fm))
		}
	}
	return ex
}

func (c exceptionChain) main() exception { return c[len(c)-1] }

// isSyntheticMessage tells a captured message that carries a stack trace
// (JavaScript SDKs add an exception with no type, the message as value and
// mechanism.synthetic) from an error.
func (c exceptionChain) isSyntheticMessage() bool {
	return len(c) > 0 && c.main().synthetic && c.main().typ == ""
}

func (e exception) summary() string {
	switch {
	case e.typ == "":
		return e.value
	case e.value == "":
		return e.typ
	}
	return e.typ + ": " + e.value
}

// putException writes the raised exception as the semantic conventions
// name it; the stack trace text holds the whole chain. The entries
// themselves, every field of every frame, stay in sentry.exception.
func putException(attrs pcommon.Map, l *sentrysignal.Limiter, chain exceptionChain) {
	if len(chain) == 0 {
		return
	}
	main := chain.main()
	// exception.values[-1].type
	if main.typ != "" {
		l.PutStr(attrs, string(semconv.ExceptionTypeKey), main.typ)
	}
	// exception.values[-1].value
	if main.value != "" {
		l.PutStr(attrs, string(semconv.ExceptionMessageKey), main.value)
	}
	// exception.values[].stacktrace.frames
	if text := chain.stacktrace(); text != "" {
		l.PutStr(attrs, string(semconv.ExceptionStacktraceKey), text)
	}
}

// stacktrace renders the chain as a text trace: the raised exception
// first, each earlier one after it as its cause, frames innermost first.
func (c exceptionChain) stacktrace() string {
	var b strings.Builder
	b.Grow(c.textSize())
	for i := len(c) - 1; i >= 0; i-- {
		if i < len(c)-1 {
			b.WriteString("Caused by: ")
		}
		b.WriteString(c[i].summary())
		b.WriteByte('\n')
		for j := len(c[i].frames) - 1; j >= 0; j-- {
			writeFrame(&b, c[i].frames[j])
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// textSize is about the length of the stack trace text, so that it is
// written into one buffer.
func (c exceptionChain) textSize() int {
	n := 0
	for _, e := range c {
		n += len(e.typ) + len(e.value) + 16
		for _, f := range e.frames {
			n += len(f.function) + len(f.file) + 32
		}
	}
	return n
}

// frameFile is where a frame's code is: "abs_path", else "filename",
// else "module".
func frameFile(f map[string]any) string {
	for _, member := range [...]string{"abs_path", "filename", "module"} {
		if file := sentrysignal.Str(f, member); file != "" {
			return file
		}
	}
	return ""
}

func writeFrame(b *strings.Builder, f frame) {
	b.WriteString("    at ")
	fn := f.function
	if fn == "" {
		fn = "?"
	}
	b.WriteString(fn)
	if f.file != "" {
		b.WriteString(" (")
		b.WriteString(f.file)
		if f.hasLine {
			b.WriteString(":" + strconv.FormatInt(f.lineno, 10))
			if f.hasCol {
				b.WriteString(":" + strconv.FormatInt(f.colno, 10))
			}
		}
		b.WriteByte(')')
	}
	b.WriteByte('\n')
}

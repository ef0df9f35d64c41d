package sentryevent

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/stacktrace"
)

// exception is what the semantic conventions take of one entry of
// "exception.values": its type, value and frames as the stack trace text
// shows them (translator/stacktrace renders them), and whether the SDK
// made it up for a message.
type exception struct {
	stacktrace.Exception // Frames oldest call first, as Sentry orders them
	synthetic            bool
}

// frameOf reads a frame's "function", "abs_path", "filename", "module",
// "lineno" and "colno".
func frameOf(f map[string]any) stacktrace.Frame {
	lineno, _ := sentrysignal.Int(f, "lineno")
	colno, _ := sentrysignal.Int(f, "colno")
	return stacktrace.Frame{
		Function: sentrysignal.Str(f, "function"),
		AbsPath:  sentrysignal.Str(f, "abs_path"), Filename: sentrysignal.Str(f, "filename"), Module: sentrysignal.Str(f, "module"),
		Lineno: int(lineno), Colno: int(colno),
	}
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
	ex := exception{Exception: stacktrace.Exception{Type: sentrysignal.Str(e, "type"), Value: sentrysignal.Text(e, "value")}, synthetic: synthetic}
	for _, f := range sentrysignal.Arr(sentrysignal.Obj(e, "stacktrace"), "frames") {
		if fm, ok := f.(map[string]any); ok {
			ex.Frames = append(ex.Frames, frameOf(fm))
		}
	}
	return ex
}

func (c exceptionChain) main() exception { return c[len(c)-1] }

// isSyntheticMessage tells a captured message that carries a stack trace
// (JavaScript SDKs add an exception with no type, the message as value and
// mechanism.synthetic) from an error.
func (c exceptionChain) isSyntheticMessage() bool {
	return len(c) > 0 && c.main().synthetic && c.main().Type == ""
}

func (e exception) summary() string { return stacktrace.Summary(e.Type, e.Value) }

// putException writes the raised exception as the semantic conventions
// name it; the stack trace text holds the whole chain. The entries
// themselves, every field of every frame, stay in sentry.exception.
func putException(attrs pcommon.Map, l *sentrysignal.Limiter, chain exceptionChain) {
	if len(chain) == 0 {
		return
	}
	main := chain.main()
	// exception.values[-1].type
	if main.Type != "" {
		l.PutStr(attrs, string(semconv.ExceptionTypeKey), main.Type)
	}
	// exception.values[-1].value
	if main.Value != "" {
		l.PutStr(attrs, string(semconv.ExceptionMessageKey), main.Value)
	}
	// exception.values[].stacktrace.frames
	if text := chain.stacktrace(); text != "" {
		l.PutStr(attrs, string(semconv.ExceptionStacktraceKey), text)
	}
}

// stacktrace renders the chain as a text trace (stacktrace.Render): the
// raised exception first, each earlier one after it as its cause, frames
// innermost first.
func (c exceptionChain) stacktrace() string {
	chain := make([]stacktrace.Exception, len(c))
	for i := range c {
		chain[i] = c[i].Exception
	}
	return stacktrace.Render(chain)
}

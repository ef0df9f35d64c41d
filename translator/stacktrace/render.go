package stacktrace

import (
	"cmp"
	"strconv"
	"strings"
)

// Render writes an exception chain as the text the receiver puts in
// exception.stacktrace for a Sentry event (translator/sentryevent): the
// raised exception (the last of the chain) first, each earlier one after it
// as `Caused by: `, each headed by `Type: value` (either alone when the
// other is empty), then its frames innermost first, one a line:
//
//	at function (file:lineno:colno)
//
// function is `?` when the frame names none; file is the frame's abs_path,
// else its filename, else its module, and the parenthesis is left out when
// all three are empty; colno is written only after a lineno. A frame with
// Lineno 0 has no line (Sentry's lines are 1-based). There is no trailing
// newline.
//
// It is Parse's inverse for V8's shape: what Render writes of a chain of
// JavaScript frames, Parse reads back as the same chain.
func Render(chain []Exception) string {
	var b strings.Builder
	b.Grow(renderedSize(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		if i < len(chain)-1 {
			b.WriteString("Caused by: ")
		}
		b.WriteString(Summary(chain[i].Type, chain[i].Value))
		b.WriteByte('\n')
		frames := chain[i].Frames
		for j := len(frames) - 1; j >= 0; j-- {
			writeFrame(&b, &frames[j])
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Summary is an exception's header line, what a runtime prints of it:
// `Type: value`, either alone when the other is empty.
func Summary(typ, value string) string {
	switch {
	case typ == "":
		return value
	case value == "":
		return typ
	}
	return typ + ": " + value
}

// writeFrame writes one `    at function (file:line:col)` line.
func writeFrame(b *strings.Builder, f *Frame) {
	b.WriteString("    at ")
	b.WriteString(cmp.Or(f.Function, "?"))
	if file := cmp.Or(f.AbsPath, f.Filename, f.Module); file != "" {
		b.WriteString(" (")
		b.WriteString(file)
		writePosition(b, f.Lineno, f.Colno)
		b.WriteByte(')')
	}
	b.WriteByte('\n')
}

// writePosition writes `:line` and `:line:col`; a column without a line is
// not written, as it locates nothing.
func writePosition(b *strings.Builder, line, col int) {
	if line == 0 {
		return
	}
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(line))
	if col != 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(col))
	}
}

// renderedSize is about the length of the rendered chain, so that the
// builder grows once.
func renderedSize(chain []Exception) int {
	n := 0
	for i := range chain {
		n += len(chain[i].Type) + len(chain[i].Value) + 16
		for j := range chain[i].Frames {
			f := &chain[i].Frames[j]
			n += len(f.Function) + len(f.AbsPath) + len(f.Filename) + 32
		}
	}
	return n
}

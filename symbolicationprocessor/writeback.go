package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"cmp"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// Location attributes that keep a resolved frame's input, so that nothing
// is lost: the name, file, line and column as the producer sent them (the
// minified or obfuscated ones).
const (
	attrGeneratedFunction = "symbolication.generated.function"
	attrGeneratedFile     = "symbolication.generated.file"
	attrGeneratedLine     = "symbolication.generated.line"
	attrGeneratedColumn   = "symbolication.generated.column"
	attrGeneratedModule   = "symbolication.generated.module"
)

// writeBack replaces each resolved line of a location by the answer's
// frames (innermost first, as OTLP orders inlined lines), or adds them to
// an address-only location, and records the input of the first resolved
// line as location attributes. Unresolved targets (nil answers) leave
// their line as it came.
func writeBack(d *dictionary, loc pprofile.Location, targets []target, answers [][]symbolication.Frame) {
	if writeInPlace(d, loc, targets, answers) {
		return
	}
	byLine, addrAnswer, first := answersByLine(targets, answers)
	if len(byLine) == 0 && len(addrAnswer) == 0 {
		return
	}
	rebuildLines(d, loc, byLine, addrAnswer)
	if first != nil {
		keepGenerated(d, loc, first)
	}
}

// answersByLine sorts a location's answers: by the line they replace, or
// the answer of its address; first is the first resolved line's target.
func answersByLine(targets []target, answers [][]symbolication.Frame) (byLine map[int][]symbolication.Frame, addrAnswer []symbolication.Frame, first *target) {
	byLine = map[int][]symbolication.Frame{}
	for j := range targets {
		switch {
		case len(answers[j]) == 0:
		case targets[j].line < 0:
			addrAnswer = answers[j]
		default:
			byLine[targets[j].line] = answers[j]
			first = cmp.Or(first, &targets[j])
		}
	}
	return byLine, addrAnswer, first
}

// rebuildLines replaces each answered line by its answer's frames, and
// appends the frames of the address.
func rebuildLines(d *dictionary, loc pprofile.Location, byLine map[int][]symbolication.Frame, addrAnswer []symbolication.Frame) {
	old := pprofile.NewLineSlice()
	loc.Lines().MoveAndAppendTo(old)
	lines := loc.Lines()
	for j, l := range old.All() {
		if answer, ok := byLine[j]; ok {
			appendFrames(d, lines, answer)
			continue
		}
		l.CopyTo(lines.AppendEmpty())
	}
	appendFrames(d, lines, addrAnswer)
}

// writeInPlace handles the common case without rebuilding the lines: every
// answer is one frame for one existing line (JavaScript frames). False
// when the case does not apply.
func writeInPlace(d *dictionary, loc pprofile.Location, targets []target, answers [][]symbolication.Frame) bool {
	first, ok := inPlaceFirst(targets, answers)
	if !ok || first == nil {
		return ok
	}
	lines := loc.Lines()
	for j := range targets {
		if len(answers[j]) == 1 {
			setFrame(d, lines.At(targets[j].line), answers[j][0])
		}
	}
	keepGenerated(d, loc, first)
	return true
}

// inPlaceFirst reports whether every answer is at most one frame for an
// existing line, and the first target answered.
func inPlaceFirst(targets []target, answers [][]symbolication.Frame) (*target, bool) {
	var first *target
	for j := range targets {
		if targets[j].line < 0 || len(answers[j]) > 1 {
			return nil, false
		}
		if len(answers[j]) == 1 {
			first = cmp.Or(first, &targets[j])
		}
	}
	return first, true
}

func setFrame(d *dictionary, l pprofile.Line, f symbolication.Frame) {
	name := f.Function
	if f.Module != "" {
		name = f.Module + "." + f.Function
	}
	l.SetFunctionIndex(d.newFunction(name, f.File))
	l.SetLine(int64(f.Line))
	l.SetColumn(int64(f.Column))
}

func appendFrames(d *dictionary, lines pprofile.LineSlice, frames []symbolication.Frame) {
	for _, f := range frames {
		setFrame(d, lines.AppendEmpty(), f)
	}
}

func keepGenerated(d *dictionary, loc pprofile.Location, t *target) {
	attrs := loc.AttributeIndices()
	f := t.in.Frame
	if t.name != "" {
		attrs.Append(d.attr(attrGeneratedFunction, t.name, 0, false))
	}
	if f.Module != "" {
		attrs.Append(d.attr(attrGeneratedModule, f.Module, 0, false))
	}
	if f.File != "" {
		attrs.Append(d.attr(attrGeneratedFile, f.File, 0, false))
	}
	if f.Line != 0 {
		attrs.Append(d.attr(attrGeneratedLine, "", int64(f.Line), true))
	}
	if f.Column != 0 {
		attrs.Append(d.attr(attrGeneratedColumn, "", int64(f.Column), true))
	}
}

package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"github.com/sentryprofile/otelcol-sentryprofile/internal/pmap"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// errorTarget is one frame of an error's stack trace to resolve.
type errorTarget struct {
	kind symbolication.Kind
	in   symbolication.Lookup
}

// frameScene is what a frame's lookup depends on beside the frame: the
// event's platform and images, and whether the frame is a caller's (every
// frame but the innermost, the last in Sentry's order).
type frameScene struct {
	platform string
	images   *errorImages
	caller   bool
}

// The event platforms whose frames are JavaScript or JVM frames.
var (
	jsPlatforms  = map[string]bool{"javascript": true, "node": true}
	jvmPlatforms = map[string]bool{"java": true}
)

// errorTargetOf is what to resolve of one Sentry frame: a native address, a
// JVM method or a JavaScript position, by what the frame carries and the
// kinds configured; false for a frame to pass untouched (resolved before,
// or nothing configured resolves it).
func (s *frameProcessor) errorTargetOf(f pcommon.Map, sc frameScene) (errorTarget, bool) {
	if alreadySymbolicated(f) {
		return errorTarget{}, false
	}
	platform := mapStr(f, "platform")
	if platform == "" {
		platform = sc.platform
	}
	for _, kind := range kindsInOrder {
		if _, ok := s.resolvers[kind]; !ok {
			continue
		}
		if in, ok := errorLookup(kind, f, platform, sc); ok {
			return errorTarget{kind: kind, in: in}, true
		}
	}
	return errorTarget{}, false
}

// alreadySymbolicated: a frame this processor (data.symbolicated) or
// Sentry's symbolicator (symbolicator_status) resolved before.
func alreadySymbolicated(f pcommon.Map) bool {
	if v, ok := pmap.Map(f, "data").Get("symbolicated"); ok && v.Type() == pcommon.ValueTypeBool && v.Bool() {
		return true
	}
	_, ok := f.Get("symbolicator_status")
	return ok
}

// errorLookup is the lookup of a frame for one kind.
func errorLookup(kind symbolication.Kind, f pcommon.Map, platform string, sc frameScene) (symbolication.Lookup, bool) {
	switch kind {
	case symbolication.KindSourceMap:
		return jsErrorLookup(f, platform, sc.images)
	case symbolication.KindProGuard:
		return jvmErrorLookup(f, platform, sc.images)
	case symbolication.KindNative:
		return nativeErrorLookup(f, sc)
	}
	return symbolication.Lookup{}, false
}

// jsErrorLookup: a JavaScript frame's executing position (abs_path, else
// filename; lineno and colno), with its bundle's debug id when the event's
// sourcemap images name it.
func jsErrorLookup(f pcommon.Map, platform string, im *errorImages) (symbolication.Lookup, bool) {
	file := mapStr(f, "abs_path")
	if file == "" {
		file = mapStr(f, "filename")
	}
	line, okLine := mapInt(f, "lineno")
	col, okCol := mapInt(f, "colno")
	if !okLine || !okCol || !validPosition(line) || !validPosition(col) || !bundleFile(file, jsPlatforms[platform]) {
		return symbolication.Lookup{}, false
	}
	return symbolication.Lookup{
		DebugID:   im.sourceMaps[file],
		Executing: true,
		Frame:     symbolication.Frame{Function: mapStr(f, "function"), File: file, Line: int(line), Column: int(col)},
	}, true
}

// validPosition: a 1-based line or column within what a frame holds.
func validPosition(n int64) bool { return n > 0 && n <= 1<<31 }

// jvmErrorLookup: a JVM frame as sentry-java sends it (module the class,
// function the method, lineno), with the event's ProGuard uuid.
func jvmErrorLookup(f pcommon.Map, platform string, im *errorImages) (symbolication.Lookup, bool) {
	class, method := mapStr(f, "module"), mapStr(f, "function")
	if !jvmPlatforms[platform] || class == "" || method == "" || im.proguardUUID == "" {
		return symbolication.Lookup{}, false
	}
	line, _ := mapInt(f, "lineno")
	if line < 0 || line > 1<<31 {
		line = 0
	}
	return symbolication.Lookup{
		DebugID: im.proguardUUID,
		Frame:   symbolication.Frame{Function: method, Module: class, File: mapStr(f, "filename"), Line: int(line)},
	}, true
}

// nativeErrorLookup: a native frame's instruction_addr in the ELF image
// that holds it. A caller's address is the return address, the instruction
// after the call: it is looked up one byte back, inside the call, as
// symbolizers do, so that its line is the call's.
func nativeErrorLookup(f pcommon.Map, sc frameScene) (symbolication.Lookup, bool) {
	if _, hasLine := f.Get("lineno"); hasLine {
		return symbolication.Lookup{}, false
	}
	addr, ok := mapAddr(f, "instruction_addr")
	if !ok || addr == 0 {
		return symbolication.Lookup{}, false
	}
	img, ok := sc.images.nativeImageAt(addr)
	if !ok {
		return symbolication.Lookup{}, false
	}
	if sc.caller && addr > img.start {
		addr--
	}
	return symbolication.Lookup{
		BuildID: img.buildID, ImageAddr: img.start,
		Frame: symbolication.Frame{Address: addr, File: img.file},
	}, true
}

// appendResolvedFrames appends the frames of an answer in Sentry's order
// (outermost first; the answer is innermost first), each a copy of the
// frame as sent with the answer's fields written over it, as Sentry writes
// a frame after symbolication.
func appendResolvedFrames(dst pcommon.Slice, orig pcommon.Map, t errorTarget, answer []symbolication.Frame) {
	for k := len(answer) - 1; k >= 0; k-- {
		nf := dst.AppendEmpty().SetEmptyMap()
		orig.CopyTo(nf)
		writeResolved[t.kind](nf, orig, t, answer[k])
		markSymbolicated(nf)
	}
}

// writeResolved writes an answer over a frame, per kind.
var writeResolved = map[symbolication.Kind]func(nf, orig pcommon.Map, t errorTarget, a symbolication.Frame){
	symbolication.KindSourceMap: writeJSFrame,
	symbolication.KindProGuard:  writeJVMFrame,
	symbolication.KindNative:    writeNativeFrame,
}

// writeJSFrame: Symbolicator's JavaScript frame: the original function (the
// frame's own when the map names none), file, line and column;
// data.resolved_with says the bundle's debug id found the map. The SDK's
// source context is the bundle's minified code, not the original line's:
// it is dropped (it stays in raw_stacktrace), as Symbolicator replaces it.
func writeJSFrame(nf, _ pcommon.Map, t errorTarget, a symbolication.Frame) {
	for _, k := range [...]string{"pre_context", "context_line", "post_context"} {
		nf.Remove(k)
	}
	if a.Function != "" {
		nf.PutStr("function", a.Function)
	}
	putFile(nf, a.File)
	nf.PutInt("lineno", int64(a.Line))
	putColumn(nf, a.Column)
	if t.in.DebugID != "" {
		dataOf(nf).PutStr("resolved_with", "debug-id")
	}
}

// writeJVMFrame: Symbolicator's JVM frame: the original class (module) and
// method (function), its source file and line.
func writeJVMFrame(nf, _ pcommon.Map, _ errorTarget, a symbolication.Frame) {
	nf.PutStr("module", a.Module)
	nf.PutStr("function", a.Function)
	putFile(nf, a.File)
	putLine(nf, a.Line)
}

// writeNativeFrame: Symbolicator's native frame: the function, file and
// line of the address, the function as sent kept as raw_function, and
// symbolicator_status; instruction_addr stays the address as sent.
func writeNativeFrame(nf, orig pcommon.Map, _ errorTarget, a symbolication.Frame) {
	if raw := mapStr(orig, "function"); raw != "" && raw != a.Function {
		nf.PutStr("raw_function", raw)
	}
	if a.Function != "" {
		nf.PutStr("function", a.Function)
	}
	putFile(nf, a.File)
	putLine(nf, a.Line)
	putColumn(nf, a.Column)
	nf.PutStr("symbolicator_status", "symbolicated")
}

// putFile sets filename and abs_path to a resolved source file.
func putFile(nf pcommon.Map, file string) {
	if file == "" {
		return
	}
	nf.PutStr("filename", file)
	nf.PutStr("abs_path", file)
}

// putLine sets lineno, or removes it when the answer has none (the line
// as sent is the obfuscated build's).
func putLine(nf pcommon.Map, line int) {
	if line > 0 {
		nf.PutInt("lineno", int64(line))
		return
	}
	nf.Remove("lineno")
}

// putColumn sets colno, or removes it when the answer has none (a column
// as sent is the minified or compiled code's).
func putColumn(nf pcommon.Map, col int) {
	if col > 0 {
		nf.PutInt("colno", int64(col))
		return
	}
	nf.Remove("colno")
}

// markSymbolicated sets data.symbolicated, as Symbolicator does on a frame
// it resolved, and as this processor reads to pass the frame the next time.
func markSymbolicated(nf pcommon.Map) { dataOf(nf).PutBool("symbolicated", true) }

// dataOf is the frame's data map, made when it has none.
func dataOf(nf pcommon.Map) pcommon.Map {
	if v, ok := nf.Get("data"); ok && v.Type() == pcommon.ValueTypeMap {
		return v.Map()
	}
	return nf.PutEmptyMap("data")
}

// Package stacktrace parses language stack-trace text into Sentry
// exceptions. TEMPORARY STUB for the h-bridge branch: the real package is
// written in parallel (h-stacks); this file is deleted before the branch is
// handed over. It understands only Java-style traces, enough to compile and
// exercise the bridge.
package stacktrace

import (
	"strconv"
	"strings"
)

type Frame struct {
	Function, Module, Filename, AbsPath string
	Lineno, Colno                       int
	Package                             string
	InApp                               *bool
	ContextLine                         string
}

type Exception struct {
	Type, Value, Module string
	Frames              []Frame // innermost last
}

type Language string

// Parse reads a Java trace: "Type: value" then "\tat pkg.Class.method(File.java:12)".
func Parse(text string) (chain []Exception, lang Language, ok bool) {
	var cur *Exception
	var out []Exception
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "at "):
			if cur == nil {
				continue
			}
			body := strings.TrimPrefix(t, "at ")
			fn, loc, _ := strings.Cut(body, "(")
			loc = strings.TrimSuffix(loc, ")")
			file, ln, _ := strings.Cut(loc, ":")
			f := Frame{Filename: file}
			if i := strings.LastIndex(fn, "."); i > 0 {
				f.Module, f.Function = fn[:i], fn[i+1:]
			} else {
				f.Function = fn
			}
			f.Lineno, _ = strconv.Atoi(ln)
			cur.Frames = append([]Frame{f}, cur.Frames...)
		case t == "" || strings.HasPrefix(t, "..."):
		default:
			t = strings.TrimPrefix(t, "Caused by: ")
			typ, val, _ := strings.Cut(t, ": ")
			out = append(out, Exception{Type: typ, Value: val})
			cur = &out[len(out)-1]
		}
	}
	frames := 0
	for _, e := range out {
		frames += len(e.Frames)
	}
	if frames == 0 {
		return nil, "", false
	}
	// Sentry's order: oldest cause first, raised exception last.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, "java", true
}

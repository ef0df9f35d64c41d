package sentrygrouping

import (
	"strings"
)

// The client fingerprint (src/sentry/grouping/fingerprinting/utils.py,
// src/sentry/grouping/api.py, src/sentry/grouping/variants.py): an SDK's
// "fingerprint" replaces the default grouping; an entry {{ default }}
// stands for it, so ["{{ default }}", "db"] splits a default group by
// "db". Other {{ variables }} take the event's values.

// defaultVariable is what every spelling of {{ default }} resolves to.
const defaultVariable = "{{ default }}"

// fingerprintKind is how a fingerprint relates to the default grouping.
type fingerprintKind uint8

const (
	fingerprintDefault fingerprintKind = iota // none, or only {{ default }}
	fingerprintHybrid                         // {{ default }} and other entries
	fingerprintCustom                         // no {{ default }}
)

// variableName returns the name of an entry that is a whole {{ name }},
// the name being one run of non-space characters.
func variableName(entry string) (string, bool) {
	inner, ok := strings.CutPrefix(entry, "{{")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "}}")
	if !ok {
		return "", false
	}
	name := strings.TrimSpace(inner)
	if name == "" || strings.ContainsAny(name, " \t\n\r\f\v") {
		return "", false
	}
	return name, true
}

func isDefaultVariable(entry string) bool {
	name, ok := variableName(entry)
	return ok && name == "default"
}

func kindOf(fingerprint []string) fingerprintKind {
	hasDefault := false
	for _, e := range fingerprint {
		hasDefault = hasDefault || isDefaultVariable(e)
	}
	switch {
	case len(fingerprint) == 0, len(fingerprint) == 1 && hasDefault:
		return fingerprintDefault
	case hasDefault:
		return fingerprintHybrid
	}
	return fingerprintCustom
}

// resolveFingerprint replaces the variables of a fingerprint by the
// event's values. An unknown variable stays as it was written, as
// newstyle:2023-01-11 keeps it.
func resolveFingerprint(ev *Event) []string {
	out := make([]string, len(ev.Fingerprint))
	for i, e := range ev.Fingerprint {
		out[i] = e
		name, ok := variableName(e)
		if !ok {
			continue
		}
		if name == "default" {
			out[i] = defaultVariable
			continue
		}
		if v, known := variableValue(ev, name); known {
			out[i] = v
		}
	}
	return out
}

// variableValue is the value of a fingerprint variable, or a placeholder
// naming what the event lacks.
func variableValue(ev *Event, name string) (string, bool) {
	if tag, ok := strings.CutPrefix(name, "tags."); ok {
		return tagValue(ev.Tags, tag), true
	}
	if read := eventVariables[name]; read != nil {
		return read(ev), true
	}
	if read := frameVariables[name]; read != nil {
		return read(crashFrame(ev)), true
	}
	return "", false
}

// eventVariables read the event's members.
var eventVariables = map[string]func(ev *Event) string{
	"transaction": func(ev *Event) string { return or(ev.Transaction, "<no-transaction>") },
	"message": func(ev *Event) string {
		return or(ev.Message.Formatted, ev.Message.Template, lastException(ev).Value, "<no-message>")
	},
	"type":        func(ev *Event) string { return or(lastException(ev).Type, "<no-type>") },
	"error.type":  func(ev *Event) string { return or(lastException(ev).Type, "<no-type>") },
	"value":       func(ev *Event) string { return or(lastException(ev).Value, "<no-value>") },
	"error.value": func(ev *Event) string { return or(lastException(ev).Value, "<no-value>") },
	"level":       func(ev *Event) string { return or(ev.Level, "<no-level>") },
	"logger":      func(ev *Event) string { return or(ev.Logger, "<no-logger>") },
}

// frameVariables read the crash frame (an empty one when there is none).
var frameVariables = map[string]func(f *Frame) string{
	"function":       func(f *Frame) string { return or(f.Function, "<no-function>") },
	"stack.function": func(f *Frame) string { return or(f.Function, "<no-function>") },
	"path":           func(f *Frame) string { return or(f.AbsPath, f.Filename, "<no-abs-path>") },
	"stack.abs_path": func(f *Frame) string { return or(f.AbsPath, f.Filename, "<no-abs-path>") },
	"stack.filename": func(f *Frame) string { return or(f.Filename, f.AbsPath, "<no-filename>") },
	"module":         func(f *Frame) string { return or(f.Module, "<no-module>") },
	"stack.module":   func(f *Frame) string { return or(f.Module, "<no-module>") },
	"package":        func(f *Frame) string { return or(baseName(f.Package), "<no-package>") },
	"stack.package":  func(f *Frame) string { return or(baseName(f.Package), "<no-package>") },
}

func tagValue(tags []Tag, key string) string {
	for _, t := range tags {
		if t.Key == key {
			return t.Value
		}
	}
	return "<no-value-for-tag-" + key + ">"
}

func or(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func lastException(ev *Event) Exception {
	if len(ev.Exceptions) == 0 {
		return Exception{}
	}
	return ev.Exceptions[len(ev.Exceptions)-1]
}

// crashFrame is the frame Sentry names the crash by: the innermost in-app
// frame of the raised exception's stack trace (else of the event's, else
// of its only thread), else the innermost frame; as normalized for
// grouping (made-up modules, in_app after the rules). With no frame, an
// empty one.
func crashFrame(ev *Event) *Frame {
	st := crashStacktrace(ev)
	if st == nil || len(st.Frames) == 0 {
		return &Frame{}
	}
	frames := prepare(st, ev.Platform).frames
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].InApp != nil && *frames[i].InApp {
			return &frames[i]
		}
	}
	return &frames[len(frames)-1]
}

func crashStacktrace(ev *Event) *Stacktrace {
	for _, st := range [...]*Stacktrace{lastException(ev).Stacktrace, ev.Stacktrace} {
		if st != nil {
			return st
		}
	}
	if len(ev.Threads) == 1 {
		return ev.Threads[0].Stacktrace
	}
	return nil
}

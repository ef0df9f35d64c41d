package sentrygrouping

import (
	"strings"
)

// Sentry's stack trace rules ("enhancements") decide which frames are in
// the app and which group at all. newstyle:2023-01-11 uses the base
// all-platforms:2023-01-11 (src/sentry/grouping/enhancer/
// enhancement-configs/all-platforms@2023-01-11.txt). Its rules for
// JavaScript, Node, Python, Java and Android, Kotlin, Go and Dart are
// below, in the file's order; its native rules (Apple, Windows, Linux
// libraries, Unreal, Rust and C++ borders) are not.
//
// As in Sentry, rules apply in order in two passes: the first sets
// categories and in_app (a later rule overrides an earlier one, and the
// SDK's in_app), the second, on the final categories, takes frames out of
// grouping. A rule's matches are found before its actions apply.

// field is what a matcher reads of a frame.
type field uint8

const (
	fieldFamily   field = iota
	fieldPath           // abs_path, else filename; lowercased
	fieldFilename       // filename; lowercased
	fieldModule
	fieldFunction
	fieldPackage // lowercased
	fieldCategory
)

// matcher tests one field of the frame at offset (0 the frame, -1 its
// caller, +1 its callee).
type matcher struct {
	field  field
	how    matching
	offset int
	negate bool
	exact  string // family and category
	glob   glob   // the other fields
}

// matching is how a matcher compares its field.
type matching uint8

const (
	byExact matching = iota
	byPath
	byName
)

// flagRange is where a flag action applies: the matched frame, the
// frames it called (Sentry's ^) or the frames that called it (v).
type flagRange int8

const (
	rangeSelf flagRange = iota
	rangeCallees
	rangeCallers
)

// action is one effect of a rule: a category, or a flag (in_app, group)
// set over a range.
type action struct {
	category string
	flag     flagKind
	value    bool
	rng      flagRange
}

type flagKind uint8

const (
	flagNone flagKind = iota
	flagApp
	flagGroup
)

type enhancement struct {
	when []matcher
	then []action
}

// frameState is what the rules decide of a frame.
type frameState struct {
	category string
	inApp    *bool
	grouped  bool
}

// Matcher constructors, named after the rule syntax's keys.
// javascript matches the frames of the JavaScript family (family:javascript),
// the only family the rules kept here name.
func javascript() matcher       { return matcher{field: fieldFamily, exact: familyJavaScript} }
func category(c string) matcher { return matcher{field: fieldCategory, exact: c} }
func path(g string) matcher {
	return matcher{field: fieldPath, how: byPath, glob: compileGlob(g, true)}
}
func filename(g string) matcher {
	return matcher{field: fieldFilename, how: byPath, glob: compileGlob(g, true)}
}
func module(g string) matcher {
	return matcher{field: fieldModule, how: byName, glob: compileGlob(g, false)}
}
func function(g string) matcher {
	return matcher{field: fieldFunction, how: byName, glob: compileGlob(g, false)}
}
func pkg(g string) matcher {
	return matcher{field: fieldPackage, how: byPath, glob: compileGlob(g, true)}
}

// caller, callee and not wrap a matcher: [ m ] | frame, frame | [ m ], !m.
func caller(m matcher) matcher { m.offset = -1; return m }
func callee(m matcher) matcher { m.offset = 1; return m }
func not(m matcher) matcher    { m.negate = true; return m }

// Action constructors: -app, +app, ^-app, -group, v-group, category=.
var (
	notApp        = action{flag: flagApp, value: false}
	inApp         = action{flag: flagApp, value: true}
	calleesNotApp = action{flag: flagApp, value: false, rng: rangeCallees}
	noGroup       = action{flag: flagGroup, value: false}
	callersNoGrp  = action{flag: flagGroup, value: false, rng: rangeCallers}
)

func setCategory(c string) action { return action{category: c} }

func when(m ...matcher) []matcher { return m }

// defaultEnhancements are the non-native rules of all-platforms:2023-01-11.
var defaultEnhancements = []enhancement{
	// Dart and Flutter
	{when(javascript(), path("org-dartlang-sdk:///**")), []action{notApp, noGroup}},
	{when(javascript(), module("**/packages/flutter/**")), []action{notApp}},
	{when(path("package:sentry/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_flutter/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_logging/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_dio/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_file/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_hive/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_isar/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_sqflite/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_drift/**")), []action{notApp, noGroup}},
	{when(path("package:sentry_isar/**")), []action{notApp}},
	{when(path("package:sentry_link/**")), []action{notApp}},
	{when(path("package:sentry_firebase_remote_config/**")), []action{notApp}},
	// Java and Android: categories
	{when(module("dalvik.system.*")), []action{setCategory("system")}},
	{when(module("com.android.*")), []action{setCategory("system")}},
	{when(pkg("/apex/com.android.*/lib*/**")), []action{setCategory("system")}},
	{when(module("com.lenovo.lsf.*")), []action{setCategory("system")}},
	{when(module("com.lenovo.payplus.*")), []action{setCategory("system")}},
	{when(module("java.*")), []action{setCategory("std")}},
	{when(module("com.google.crypto.*")), []action{setCategory("std")}},
	{when(module("com.google.android.*")), []action{setCategory("std")}},
	{when(module("javax.crypto.*")), []action{setCategory("std")}},
	{when(module("android.database.*")), []action{setCategory("std")}},
	{when(module("androidx.*")), []action{setCategory("std")}},
	{when(module("android.*")), []action{setCategory("std")}},
	{when(module("android.os.*")), []action{setCategory("system")}},
	{when(module("android.view.*")), []action{setCategory("ui")}},
	{when(module("android.text.*")), []action{setCategory("ui")}},
	{when(module("android.widget.*")), []action{setCategory("ui")}},
	{when(module("android.app.Dialog")), []action{setCategory("ui")}},
	{when(module("androidx.*.widget.*")), []action{setCategory("ui")}},
	{when(module("com.google.android.material.*")), []action{setCategory("ui")}},
	{when(category("ui"), function("handleMessage")), []action{setCategory("indirection")}},
	{when(category("ui"), function("run")), []action{setCategory("indirection")}},
	{when(module("android.os.AsyncTask*"), function("call")), []action{setCategory("threadbase")}},
	{when(module("java.util.concurrent.ThreadPoolExecutor*"), function("runWorker")), []action{setCategory("threadbase")}},
	{when(module("android.os.*"), function("call")), []action{setCategory("threadbase")}},
	{when(module("android.app.ActivityThread"), function("main")), []action{setCategory("threadbase")}},
	{when(module("android.view.View"), function("layout")), []action{setCategory("threadbase")}},
	{when(module("android.os.Looper"), function("loop")), []action{setCategory("threadbase")}},
	{when(module("android.os.Handler"), function("dispatchMessage")), []action{setCategory("threadbase")}},
	{when(module("android.os.Handler"), function("handleCallback")), []action{setCategory("threadbase")}},
	{when(module("android.app.ActivityThread*"), function("handleMessage")), []action{setCategory("threadbase")}},
	{when(module("java.lang.reflect.*")), []action{setCategory("indirection")}},
	{when(module("java.lang.Class"), function("getMethod")), []action{setCategory("indirection")}},
	{when(module("androidx.work.impl.utils.ForceStopRunnable")), []action{setCategory("indirection")}},
	{when(module("cn.gundam.sdk.*")), []action{setCategory("telemetry")}},
	{when(module("com.lenovo.payplus.analytics.*")), []action{setCategory("telemetry")}},
	{when(pkg("**/libBugly.so")), []action{setCategory("telemetry")}},
	{when(module("java.lang.System"), function("loadLibrary")), []action{setCategory("load")}},
	{when(module("java.lang.Runtime"), function("loadLibrary*")), []action{setCategory("load")}},
	// what categories mean for in_app and grouping
	{when(category("system")), []action{notApp}},
	{when(category("threadbase")), []action{noGroup, callersNoGrp}},
	{when(category("telemetry")), []action{noGroup}},
	{when(category("indirection")), []action{noGroup}},
	{when(category("internals")), []action{noGroup}},
	// a system frame between two others is noise
	{when(caller(not(category("system"))), category("system"), callee(not(category("system")))), []action{setCategory("indirection")}},
	{when(caller(category("free")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("system")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("std")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("std")), category("std")), []action{setCategory("internals")}},
	{when(caller(category("ui")), category("ui")), []action{setCategory("internals")}},
	{when(caller(category("ui")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("internals")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("internals")), category("ui")), []action{setCategory("internals")}},
	{when(caller(category("load")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("load")), category("load")), []action{setCategory("internals")}},
	{when(caller(category("throw")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("runtime")), category("system")), []action{setCategory("internals")}},
	{when(caller(category("dtor")), category("dtor")), []action{setCategory("internals")}},
	// SDK specific rules: vendored and installed packages
	{when(path("**/vendor/**")), []action{notApp}},
	{when(path("**/site-packages/**")), []action{notApp}},
	{when(path("**/dist-packages/**")), []action{notApp}},
	{when(path("**/node_modules/**")), []action{notApp}},
	{when(module("unpkg/**")), []action{notApp}},
	{when(path("**https://unpkg.com/**")), []action{notApp}},
	{when(path("**https://cdnjs.cloudflare.com/**")), []action{notApp}},
	{when(path("**https://cdn.jsdelivr.net/**")), []action{notApp}},
	{when(path("**https://esm.run/**")), []action{notApp}},
	{when(javascript(), function("reportError")), []action{calleesNotApp, notApp}},
	// bundled JavaScript: in the app unless it came from node_modules
	{when(javascript(), path("webpack:**")), []action{inApp}},
	{when(javascript(), path("webpack:**"), filename("~/***")), []action{notApp}},
	{when(javascript(), path("webpack:**"), filename("**/node_modules/**")), []action{notApp}},
	{when(javascript(), path("app:**")), []action{inApp}},
	{when(javascript(), path("app:**"), filename("**/node_modules/**")), []action{notApp}},
	// transpilers, polyfills and the runtime's task queues are noise
	{when(module("@babel/**")), []action{notApp, noGroup}},
	{when(module("core-js/**")), []action{notApp, noGroup}},
	{when(module("regenerator-runtime/**")), []action{notApp, noGroup}},
	{when(module("tslib/**")), []action{notApp, noGroup}},
	{when(javascript(), function("_callSuper")), []action{notApp, noGroup}},
	{when(function("runMicrotasks")), []action{notApp, noGroup}},
	{when(function("queueMicrotask")), []action{notApp, noGroup}},
	{when(function("processTicksAndRejections")), []action{notApp, noGroup}},
	{when(function("runNextTicks")), []action{notApp, noGroup}},
	{when(function("nextTick")), []action{notApp, noGroup}},
	// Go modules
	{when(path("**/go/pkg/mod/**")), []action{notApp}},
	// Java frameworks
	{when(module("akka.*")), []action{setCategory("framework")}},
	{when(module("com.fasterxml.*")), []action{setCategory("framework")}},
	{when(module("com.microsoft.*")), []action{setCategory("framework")}},
	{when(module("com.sun.*")), []action{setCategory("framework")}},
	{when(module("feign.*")), []action{setCategory("framework")}},
	{when(module("io.opentelemetry.*")), []action{setCategory("framework")}},
	{when(module("io.sentry.*")), []action{setCategory("framework"), noGroup}},
	{when(module("jdk.*")), []action{setCategory("framework")}},
	{when(module("oauth.*")), []action{setCategory("framework")}},
	{when(module("org.apache.*")), []action{setCategory("framework")}},
	{when(module("org.glassfish.*")), []action{setCategory("framework")}},
	{when(module("org.jboss.*")), []action{setCategory("framework")}},
	{when(module("org.jdesktop.*")), []action{setCategory("framework")}},
	{when(module("org.postgresql.*")), []action{setCategory("framework")}},
	{when(module("org.springframework.*")), []action{setCategory("framework")}},
	{when(module("org.web3j.*")), []action{setCategory("framework")}},
	{when(module("reactor.core.*")), []action{setCategory("framework")}},
	{when(module("scala.*")), []action{setCategory("framework")}},
	{when(module("sun.*")), []action{setCategory("framework")}},
	{when(category("framework")), []action{notApp}},
	// Kotlin
	{when(module("kotlin.*")), []action{notApp}},
	{when(module("kotlinx.*")), []action{notApp}},
	{when(module("io.ktor.*")), []action{notApp}},
	{when(module("io.netty.*")), []action{notApp}},
	// other telemetry
	{when(module("newrelic")), []action{notApp, noGroup}},
	{when(path("**/*newrelic*/**")), []action{notApp, noGroup}},
	{when(path("**/*LogRocket*/**")), []action{notApp, noGroup}},
}

// frameView is the text of a frame the matchers read, computed once per
// frame: lowercased paths, the family of its platform.
type frameView struct {
	family, path, filename, module, function, pkg string
}

func viewOf(f *Frame, platform string) frameView {
	if f.Platform != "" {
		platform = f.Platform
	}
	p := f.AbsPath
	if p == "" {
		p = f.Filename
	}
	return frameView{
		family:   behaviourFamily(platform),
		path:     strings.ToLower(strings.ReplaceAll(p, `\`, "/")),
		filename: strings.ToLower(strings.ReplaceAll(f.Filename, `\`, "/")),
		module:   f.Module,
		function: f.Function,
		pkg:      strings.ToLower(strings.ReplaceAll(f.Package, `\`, "/")),
	}
}

// matches tests the matcher on the frame at i.
func (m *matcher) matches(views []frameView, states []frameState, i int) bool {
	j := i + m.offset
	if j < 0 || j >= len(views) {
		return false
	}
	return m.test(&views[j], &states[j]) != m.negate
}

func (m *matcher) test(v *frameView, s *frameState) bool {
	text := fieldText[m.field](v, s)
	switch m.how {
	case byExact:
		return text == m.exact
	case byPath:
		return m.glob.matchPath(text)
	}
	return text != "" && m.glob.match(text)
}

// fieldText reads a field of a frame.
var fieldText = [...]func(v *frameView, s *frameState) string{
	fieldFamily:   func(v *frameView, _ *frameState) string { return v.family },
	fieldPath:     func(v *frameView, _ *frameState) string { return v.path },
	fieldFilename: func(v *frameView, _ *frameState) string { return v.filename },
	fieldModule:   func(v *frameView, _ *frameState) string { return v.module },
	fieldFunction: func(v *frameView, _ *frameState) string { return v.function },
	fieldPackage:  func(v *frameView, _ *frameState) string { return v.pkg },
	fieldCategory: func(_ *frameView, s *frameState) string { return s.category },
}

// matchedFrames lists the frames a rule matches, against the states
// before it applies.
func (e *enhancement) matchedFrames(views []frameView, states []frameState, dst []int) []int {
	dst = dst[:0]
	for i := range views {
		if e.matchesAt(views, states, i) {
			dst = append(dst, i)
		}
	}
	return dst
}

func (e *enhancement) matchesAt(views []frameView, states []frameState, i int) bool {
	for k := range e.when {
		if !e.when[k].matches(views, states, i) {
			return false
		}
	}
	return true
}

// applyEnhancements runs the rules over a stack trace's frames and
// returns each frame's category, in_app and whether it groups. The work
// is the number of rules times the number of frames: a range action
// covers the frames past the first (or before the last) match, which the
// union of its matches' ranges is.
func applyEnhancements(frames []Frame, platform string) []frameState {
	views, states := initialStates(frames, platform)
	var matched []int
	for _, grouping := range [...]bool{false, true} {
		for i := range defaultEnhancements {
			matched = defaultEnhancements[i].applyPass(views, states, grouping, matched)
		}
	}
	return states
}

func initialStates(frames []Frame, platform string) ([]frameView, []frameState) {
	views := make([]frameView, len(frames))
	states := make([]frameState, len(frames))
	for i := range frames {
		views[i] = viewOf(&frames[i], platform)
		states[i] = frameState{inApp: frames[i].InApp, grouped: true}
	}
	return views, states
}

// applyPass applies the rule's actions of one pass (grouping, or
// categories and in_app) to the frames it matches; matched is scratch.
func (e *enhancement) applyPass(views []frameView, states []frameState, grouping bool, matched []int) []int {
	if !e.acts(grouping) {
		return matched
	}
	matched = e.matchedFrames(views, states, matched)
	if len(matched) == 0 {
		return matched
	}
	for _, a := range e.then {
		if (a.flag == flagGroup) == grouping {
			a.apply(states, matched)
		}
	}
	return matched
}

// acts reports whether the rule has an action of the pass: grouping
// (true) or categories and in_app (false).
func (e *enhancement) acts(grouping bool) bool {
	for _, a := range e.then {
		if (a.flag == flagGroup) == grouping {
			return true
		}
	}
	return false
}

// apply sets the action's effect on the matched frames or their range.
func (a action) apply(states []frameState, matched []int) {
	if a.rng == rangeSelf {
		for _, i := range matched {
			a.set(&states[i])
		}
		return
	}
	from, to := a.span(len(states), matched)
	for i := from; i < to; i++ {
		a.set(&states[i])
	}
}

// span is the frames a ranged action covers: those the first match
// called, or those that called the last.
func (a action) span(n int, matched []int) (from, to int) {
	if a.rng == rangeCallees {
		return matched[0] + 1, n
	}
	return 0, matched[len(matched)-1]
}

func (a action) set(s *frameState) {
	switch a.flag {
	case flagNone:
		s.category = a.category
	case flagGroup:
		s.grouped = a.value
	default:
		v := a.value
		s.inApp = &v
	}
}

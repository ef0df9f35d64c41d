package sentrygrouping

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// The frame component of newstyle:2023-01-11, read from Sentry's
// src/sentry/grouping/strategies/newstyle.py (frame:v1): a frame groups by
// its module, else its file's base name, its function and, on the
// platforms whose source Sentry trusts, its context line. Line numbers
// never take part.

// Generated names that differ between runs or builds of the same code:
// the markers are kept and the generated part is replaced by <auto>.
var (
	// OpenJDK's reflection accessors (GeneratedConstructorAccessor123).
	javaReflectRe = regexp.MustCompile(`(sun\.reflect\.Generated(?:Serialization)?ConstructorAccessor)\d+`)
	// Spring's CGLIB classes (Foo$$EnhancerBySpringCGLIB$$1a2b3c).
	javaCGLIBRe = regexp.MustCompile(`(\$\$[\w_]+?CGLIB\$\$)[a-fA-F0-9]+(_[0-9]+)?`)
	// Javassist classes and their files (Foo_$$_javassist_seam_74).
	javassistRe = regexp.MustCompile(`(\$\$_javassist)(?:_seam)?(?:_[0-9]+)?`)
	// Clojure's anonymous functions (mod$fn__12345).
	clojureRe = regexp.MustCompile(`(\$fn__)\d+`)
	// Guice's enhancer and fast classes, Hibernate's proxies.
	javaEnhancerByRe    = regexp.MustCompile(`(\$\$?EnhancerBy[\w_]+?\$?\$)[a-fA-F0-9]+(_[0-9]+)?`)
	javaFastClassByRe   = regexp.MustCompile(`(\$\$?FastClassBy[\w_]+?\$?\$)[a-fA-F0-9]+(_[0-9]+)?`)
	javaHibernateProxRe = regexp.MustCompile(`(\$\$?HibernateProxy\$?\$)\w+(_[0-9]+)?`)
	// ERB templates' generated method suffixes (__1234_5678).
	rubyERBRe = regexp.MustCompile(`__\d{4,}_\d{4,}$`)
)

// javaCodegenRes are the Java module rewrites, in Sentry's order.
var javaCodegenRes = [...]*regexp.Regexp{javaReflectRe, javaCGLIBRe, javassistRe, clojureRe, javaEnhancerByRe, javaFastClassByRe, javaHibernateProxRe}

// contextLinePlatforms are the platforms whose context line groups.
var contextLinePlatforms = map[string]bool{"javascript": true, "node": true, "python": true, "php": true, "ruby": true}

// maxContextLine is the longest context line that groups: longer lines are
// minified code.
const maxContextLine = 120

// frameComponent builds the grouping component of one frame, before the
// stack trace decides whether the frame as a whole contributes.
func frameComponent(f *Frame, platform string) *component {
	if f.Platform != "" {
		platform = f.Platform
	}
	filename := filenameComponent(f.AbsPath, f.Filename, platform)
	module := moduleComponent(f.AbsPath, f.Module, platform)
	// a module takes precedence over the file name
	if module.contributes && filename.contributes {
		filename.contributes = false
	}
	var contextLine *component
	if f.ContextLine != "" && contextLinePlatforms[platform] {
		contextLine = contextLineComponent(f, platform)
	}
	contextUsed := contextLine != nil && contextLine.contributes
	function := functionComponent(f.Function, f.RawFunction, platform, f.SourceMapUsed && contextUsed)
	children := []*component{module, filename, function}
	if contextLine != nil {
		children = append(children, contextLine)
	}
	frame := node("frame", children...)
	frame.inApp = f.InApp != nil && *f.InApp
	if behaviourFamily(platform) == familyJavaScript {
		dropJavaScriptNoise(f, frame, function)
	}
	return frame
}

// dropJavaScriptNoise ignores the function names browsers make up for
// anonymous code, and frames of eval and native code.
func dropJavaScriptNoise(f *Frame, frame, function *component) {
	name := f.RawFunction
	if name == "" {
		name = f.Function
	}
	name = lastDotted(name)
	switch {
	case name == "":
		function.contributes = false
	case name == "?" || name == "<anonymous function>" || name == "<anonymous>" || name == "Anonymous function" || strings.HasSuffix(name, "/<"):
		function.contributes = false
	}
	switch {
	case name == "eval", f.AbsPath == "[native code]", f.AbsPath == "native code", f.AbsPath == "eval code", f.AbsPath == "<anonymous>":
		frame.contributes = false
	}
}

// lastDotted is the part after the last dot: Object.foo and Foo.foo are
// foo, as browsers name the same method differently.
func lastDotted(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// filenameComponent groups by the file's base name, lowercased; files at
// URLs and made-up names do not group.
func filenameComponent(absPath, filename, platform string) *component {
	if filename == "" {
		return leaf("filename", "")
	}
	base := strings.ToLower(baseName(filename))
	c := leaf("filename", base)
	switch {
	case hasURLOrigin(absPath, false), base == "<anonymous>", base == "[native code]":
		c.contributes = false
	case platform == "java":
		c.value = javassistRe.ReplaceAllString(base, "${1}<auto>")
	}
	return c
}

// baseName is the last segment of a path of either separator.
func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// moduleComponent groups by the module, without the parts code generators
// make up; a JavaScript "module" that is only the file's path does not
// group.
func moduleComponent(absPath, module, platform string) *component {
	c := leaf("module", module)
	switch {
	case module == "":
	case platform == "javascript" && strings.Contains(module, "/") && absPath != "" && strings.HasSuffix(absPath, module):
		c.contributes = false
	case platform == "java":
		cleanJavaModule(c)
	}
	return c
}

func cleanJavaModule(c *component) {
	if strings.Contains(c.value, "$$Lambda$") {
		c.contributes = false
	}
	for _, accessor := range [...]string{"sun.reflect.GeneratedMethodAccessor", "jdk.internal.reflect.GeneratedMethodAccessor"} {
		if strings.HasPrefix(c.value, accessor) {
			c.value = accessor
			return
		}
	}
	for _, re := range javaCodegenRes {
		c.value = re.ReplaceAllString(c.value, "${1}<auto>")
	}
}

// functionComponent groups by the function name, normalized per platform.
// A JavaScript frame resolved through a source map whose context line
// groups does not group by function: source maps name functions
// unreliably.
func functionComponent(function, rawFunction, platform string, mappedWithContext bool) *component {
	name := function
	if platform == "csharp" && rawFunction != "" {
		// Sentry trims C# names late and so keeps grouping by the raw one.
		name = rawFunction
	}
	if name == "" {
		name = rawFunction
	}
	c := leaf("function", name)
	if name == "" {
		return c
	}
	switch {
	case platform == "ruby":
		rubyFunction(c)
	case platform == "php":
		phpFunction(c)
	case platform == "java":
		c.contributes = !strings.HasPrefix(name, "lambda$")
	case behaviourFamily(platform) == familyNative:
		c.contributes = name != "<redacted>" && name != "<unknown>"
	case behaviourFamily(platform) == familyJavaScript:
		c.value = lastDotted(name)
		c.contributes = !mappedWithContext
	}
	return c
}

func rubyFunction(c *component) {
	if strings.HasPrefix(c.value, "block ") {
		c.value = "block"
		return
	}
	c.value = rubyERBRe.ReplaceAllString(c.value, "")
}

func phpFunction(c *component) {
	if strings.HasPrefix(c.value, "[Anonymous") || strings.HasPrefix(c.value, "class@anonymous\x00") {
		c.contributes = false
	}
	if strings.HasPrefix(c.value, "class@anonymous") {
		if i := strings.LastIndex(c.value, "::"); i >= 0 {
			c.value = c.value[i+2:]
		}
	}
}

// contextLineComponent groups by the source line with its whitespace
// collapsed; a long line (minified code) and, in JavaScript, the line of
// a nameless function at a URL do not group.
func contextLineComponent(f *Frame, platform string) *component {
	c := leaf("context_line", strings.Join(strings.Fields(f.ContextLine), " "))
	switch {
	case !c.contributes:
	case utf8.RuneCountInString(f.ContextLine) > maxContextLine:
		c.contributes = false
	case behaviourFamily(platform) == familyJavaScript && f.Function == "" && hasURLOrigin(f.AbsPath, true):
		c.contributes = false
	}
	return c
}

// isRecursion reports whether a frame repeats the one before it: a
// recursive call groups once.
func isRecursion(f, prev *Frame) bool {
	return f.AbsPath == prev.AbsPath && f.Package == prev.Package && f.Module == prev.Module &&
		f.Filename == prev.Filename && f.Function == prev.Function && f.Lineno == prev.Lineno && f.Colno == prev.Colno
}

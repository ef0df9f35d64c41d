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
	platform = or(f.Platform, platform)
	module := moduleComponent(f.AbsPath, f.Module, platform)
	filename := filenameComponent(f.AbsPath, f.Filename, platform)
	// a module takes precedence over the file name
	filename.contributes = filename.contributes && !module.contributes
	children := []*component{module, filename, nil}
	contextUsed := false
	if contextLine := contextLineComponent(f, platform); contextLine != nil {
		children = append(children, contextLine)
		contextUsed = contextLine.contributes
	}
	function := functionComponent(f.Function, f.RawFunction, platform, f.SourceMapUsed && contextUsed)
	children[2] = function
	frame := node("frame", children...)
	frame.inApp = f.InApp != nil && *f.InApp
	if behaviourFamily(platform) == familyJavaScript {
		dropJavaScriptNoise(f, frame, function)
	}
	return frame
}

// Names browsers give anonymous code, and paths of code that is not the
// application's source.
var (
	unknownJSFunctions = map[string]bool{"?": true, "<anonymous function>": true, "<anonymous>": true, "Anonymous function": true}
	lowQualityJSPaths  = map[string]bool{"[native code]": true, "native code": true, "eval code": true, "<anonymous>": true}
)

// dropJavaScriptNoise ignores the function names browsers make up for
// anonymous code, and frames of eval and native code.
func dropJavaScriptNoise(f *Frame, frame, function *component) {
	name := lastDotted(or(f.RawFunction, f.Function))
	if isUnknownJSFunction(name) {
		function.contributes = false
	}
	if name == "eval" || lowQualityJSPaths[f.AbsPath] {
		frame.contributes = false
	}
}

func isUnknownJSFunction(name string) bool {
	return name == "" || unknownJSFunctions[name] || strings.HasSuffix(name, "/<")
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
	case platform == "javascript" && isPathModule(absPath, module):
		c.contributes = false
	case platform == "java" && module != "":
		cleanJavaModule(c)
	}
	return c
}

func isPathModule(absPath, module string) bool {
	return strings.Contains(module, "/") && strings.HasSuffix(absPath, module)
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
	c := leaf("function", functionName(function, rawFunction, platform))
	if !c.contributes {
		return c
	}
	if normalize := functionNormalizers[platform]; normalize != nil {
		normalize(c)
		return c
	}
	switch behaviourFamily(platform) {
	case familyNative:
		c.contributes = !unknownNativeFunctions[c.value]
	case familyJavaScript:
		c.value = lastDotted(c.value)
		c.contributes = !mappedWithContext
	}
	return c
}

// functionName is the function, else the raw one; C# groups by the raw
// name, as Sentry trims C# names late and kept grouping by the untrimmed
// one.
func functionName(function, rawFunction, platform string) string {
	if platform == "csharp" {
		return or(rawFunction, function)
	}
	return or(function, rawFunction)
}

// functionNormalizers are the platforms whose function names Sentry
// cleans by platform rather than by family.
var functionNormalizers = map[string]func(*component){
	"ruby": rubyFunction,
	"php":  phpFunction,
	"java": func(c *component) { c.contributes = !strings.HasPrefix(c.value, "lambda$") },
}

var unknownNativeFunctions = map[string]bool{"<redacted>": true, "<unknown>": true}

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
// collapsed, on the platforms whose source Sentry trusts; nil elsewhere
// and without a line.
func contextLineComponent(f *Frame, platform string) *component {
	if f.ContextLine == "" || !contextLinePlatforms[platform] {
		return nil
	}
	c := leaf("context_line", strings.Join(strings.Fields(f.ContextLine), " "))
	c.contributes = c.contributes && !contextLineIgnored(f, platform)
	return c
}

// contextLineIgnored: a long line is minified code; in JavaScript, the
// line of a nameless function at a URL says little.
func contextLineIgnored(f *Frame, platform string) bool {
	if utf8.RuneCountInString(f.ContextLine) > maxContextLine {
		return true
	}
	return behaviourFamily(platform) == familyJavaScript && f.Function == "" && hasURLOrigin(f.AbsPath, true)
}

// isRecursion reports whether a frame repeats the one before it: a
// recursive call groups once.
func isRecursion(f, prev *Frame) bool { return recursionKeyOf(f) == recursionKeyOf(prev) }

// recursionKey is what a recursive call repeats of its caller's frame.
type recursionKey struct {
	absPath, pkg, module, filename, function string
	lineno, colno                            int64
}

func recursionKeyOf(f *Frame) recursionKey {
	return recursionKey{f.AbsPath, f.Package, f.Module, f.Filename, f.Function, f.Lineno, f.Colno}
}

package sentrygrouping

import (
	"net/url"
	"strings"
)

// The stack trace strategy of newstyle:2023-01-11 (newstyle.py,
// stacktrace:v1): a stack trace groups in two variants, "app" (its in-app
// frames) and "system" (all its frames).

// variants are the components of one interface in the two variants of a
// stack trace; system is nil where Sentry makes only the app variant (an
// exception without a stack trace, a thread that cannot be chosen).
type variants struct {
	app, system *component
}

// prepared is a stack trace after Sentry's normalization for grouping:
// modules made up for JavaScript files, then the stack trace rules.
type prepared struct {
	frames []Frame
	states []frameState
}

func prepare(st *Stacktrace, platform string) prepared {
	frames := make([]Frame, len(st.Frames))
	copy(frames, st.Frames)
	// frames of one bundle share its module: made up once per path
	modules := map[string]string{}
	for i := range frames {
		normalizePaths(&frames[i])
		if !needsJSModule(&frames[i], platform) {
			continue
		}
		m, ok := modules[frames[i].AbsPath]
		if !ok {
			m = JSModule(frames[i].AbsPath)
			modules[frames[i].AbsPath] = m
		}
		frames[i].Module = m
	}
	states := applyEnhancements(frames, platform)
	for i := range frames {
		frames[i].InApp = states[i].inApp
	}
	return prepared{frames: frames, states: states}
}

// normalizePaths fills a frame's abs_path and filename from each other,
// the filename of a URL being its path, as Relay normalizes every frame
// before Sentry groups it (relay-event-normalization, stack frames).
func normalizePaths(f *Frame) {
	if f.AbsPath == "" {
		f.AbsPath, f.Filename = f.Filename, ""
	}
	if f.Filename == "" {
		f.Filename = urlPath(f.AbsPath)
	}
}

// urlPath is a URL's path, or the path itself.
func urlPath(p string) string {
	if !isURL(p) {
		return p
	}
	if u, err := url.Parse(p); err == nil && u.Path != "" && u.Path != "/" {
		return u.Path
	}
	return p
}

// isURL reports whether Relay takes a path for a URL.
func isURL(p string) bool {
	for _, s := range [...]string{"file:", "http:", "https:", "applewebdata:"} {
		if strings.HasPrefix(p, s) {
			return true
		}
	}
	return false
}

// stacktraceVariants groups one stack trace. Its work is linear in the
// frames.
func stacktraceVariants(st *Stacktrace, platform string) variants {
	p := prepare(st, platform)
	shared := make([]*component, len(p.frames))
	for i := range p.frames {
		shared[i] = frameComponent(&p.frames[i], platform)
	}
	system := stacktraceVariant(p, shared, platform, false)
	app := stacktraceVariant(p, shared, platform, true)
	countFrames(system, app)
	return variants{app: app, system: system}
}

// stacktraceVariant builds one variant's stack trace from the frames'
// components (their children shared between the variants).
func stacktraceVariant(p prepared, shared []*component, platform string, appOnly bool) *component {
	frames := make([]*component, len(shared))
	for i, s := range shared {
		f := *s
		repeats := i > 0 && isRecursion(&p.frames[i], &p.frames[i-1])
		f.contributes = f.contributes && !repeats && (f.inApp || !appOnly)
		frames[i] = &f
	}
	ignoreLoneURLFrame(p.frames, frames, platform)
	// the rules' -group, after in_app: the frames they take out
	for i := range frames {
		frames[i].contributes = frames[i].contributes && p.states[i].grouped
	}
	return node("stacktrace", frames...)
}

// ignoreLoneURLFrame drops the one frame of a JavaScript stack trace when
// it has no function and points to a URL. (Sentry's hint calls it a
// non-URL frame; newstyle:2023-01-11 keeps the test as it was shipped.)
func ignoreLoneURLFrame(frames []Frame, comps []*component, platform string) {
	if len(frames) != 1 || frames[0].Function != "" {
		return
	}
	f := &frames[0]
	if behaviourFamily(or(f.Platform, platform)) == familyJavaScript && hasURLOrigin(f.AbsPath, true) {
		comps[0].contributes = false
	}
}

// countFrames tallies the frames as Sentry does (from the system variant,
// where every frame can contribute) and decides whether each variant's
// stack trace contributes: not without frames, the app variant not
// without an in-app frame that contributes.
func countFrames(system, app *component) {
	var c frameCounts
	for _, f := range system.children {
		c = c.add(frameCounts{inApp: boolInt(f.inApp), contributing: boolInt(f.contributes), inAppContributing: boolInt(f.inApp && f.contributes)})
	}
	system.counts, app.counts = c, c
	system.contributes = system.contributes && c.contributing > 0
	app.contributes = app.contributes && c.inAppContributing > 0
}

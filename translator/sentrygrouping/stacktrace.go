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
	for i := range frames {
		normalizePaths(&frames[i])
		if needsJSModule(&frames[i], platform) {
			frames[i].Module = JSModule(frames[i].AbsPath)
		}
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
	if f.Filename != "" || f.AbsPath == "" {
		return
	}
	f.Filename = f.AbsPath
	if !isURL(f.AbsPath) {
		return
	}
	if u, err := url.Parse(f.AbsPath); err == nil && u.Path != "" && u.Path != "/" {
		f.Filename = u.Path
	}
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
		if i > 0 && isRecursion(&p.frames[i], &p.frames[i-1]) {
			f.contributes = false
		}
		if appOnly && !f.inApp {
			f.contributes = false
		}
		frames[i] = &f
	}
	ignoreLoneURLFrame(p.frames, frames, platform)
	// the rules' -group, after in_app: the frames they take out
	for i := range frames {
		if !p.states[i].grouped {
			frames[i].contributes = false
		}
	}
	return node("stacktrace", frames...)
}

// ignoreLoneURLFrame drops the one frame of a JavaScript stack trace when
// it has no function and points to a URL. (Sentry's hint calls it a
// non-URL frame; newstyle:2023-01-11 keeps the test as it was shipped.)
func ignoreLoneURLFrame(frames []Frame, comps []*component, platform string) {
	if len(frames) != 1 || !comps[0].contributes || frames[0].Function != "" {
		return
	}
	if frames[0].Platform != "" {
		platform = frames[0].Platform
	}
	if behaviourFamily(platform) == familyJavaScript && hasURLOrigin(frames[0].AbsPath, true) {
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
		if f.inApp {
			c.inApp++
		}
		if f.contributes {
			c.contributing++
			if f.inApp {
				c.inAppContributing++
			}
		}
	}
	system.counts, app.counts = c, c
	if c.contributing == 0 {
		system.contributes = false
	}
	if c.inAppContributing == 0 {
		app.contributes = false
	}
}

package sourcemap

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// Scopes are the function scopes of a bundle: what names a frame by the
// function around its position, as Sentry's Symbolicator does
// (symbolication/jsscope's index; the resolver takes it through
// Options.ParseScopes, as jsscope's own tests use this package).
type Scopes interface {
	// FunctionName is the name of the innermost function around a
	// generated position (0-based line, UTF-16 column), its name tokens
	// mapped through m; false outside every function.
	FunctionName(line, column int, m *Map) (string, bool)
	// Size is the memory the scopes hold, in bytes.
	Size() int64
}

// loadScopes parses the scopes of the bundle a map was made for, once, when
// the map is loaded: the bundle holding an inline map, else the file beside
// the map that it is the map of (app.js for app.js.map, or the map's
// "file" in its directory). nil without a parser, when there is no such
// regular file in the map's own directory, when it is larger than
// maxBytes, or when the parser cannot follow it: frames are then named by
// the map alone.
func loadScopes(parse func([]byte) (Scopes, error), src sources.MapSource, m *Map, maxBytes int64) Scopes {
	if parse == nil {
		return nil
	}
	bundle, ok := bundleOf(src, m)
	if !ok {
		return nil
	}
	b, err := sources.ReadRegular(bundle, maxBytes)
	if err != nil {
		return nil
	}
	scopes, err := parse(b)
	if err != nil {
		return nil
	}
	return scopes
}

// bundleOf is the path of the bundle beside a map. A candidate that is a
// link out of the map's directory is not followed: the map's directory is
// within the configured ones, what a link there names need not be.
func bundleOf(src sources.MapSource, m *Map) (string, bool) {
	if src.Inline {
		return src.Path, true
	}
	dir := filepath.Dir(src.Path)
	for _, name := range []string{strings.TrimSuffix(filepath.Base(src.Path), ".map"), filepath.Base(m.File)} {
		if name == "" || name == "." || name == filepath.Base(src.Path) {
			continue
		}
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, name)); err == nil && filepath.Dir(real) == dir && isRegular(real) {
			return real, true
		}
	}
	return "", false
}

func isRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// frameOf resolves a frame by its position (line and column 1-based).
//
// A frame whose line is its own (an error's executing position, a V8 or JS
// Self-Profiling frame's function start) is named by the scope of the
// bundle that encloses the position, as Sentry's Symbolicator names it,
// when the bundle was parsed and a function encloses it. An error frame's
// file, line and column are the mapping at or before its position; a
// profile frame's keep the function-start rule (the name token's original
// position, Map.FunctionAt), else the mapping at or before it. Without a
// scope, and for Node's caller-line frames (whose line is not a position in
// the function), the map alone answers (functionOf).
func (lm *loadedMap) frameOf(f symbolication.Frame, executing bool) (Token, bool) {
	if lm.m.IsHermes() {
		// Hermes bytecode: the bundle beside the map is no source to
		// scan, and every Hermes position is an executing one, named by
		// Metro's function maps (Map.frameOf).
		return lm.m.frameOf(f)
	}
	line, col := f.Line-1, f.Column-1
	if executing {
		return lm.executingFrame(f, line, col)
	}
	if name, ok := lm.scopeName(line, col); ok {
		tok, named := lm.m.FunctionAt(line, col)
		if !named {
			tok, named = lm.m.At(line, col)
		}
		tok.Name = name
		return tok, named && tok.HasSource
	}
	return lm.m.functionOf(f)
}

// executingFrame is an error frame: the mapping at or before the position,
// named by its scope, else by the frame's own name.
func (lm *loadedMap) executingFrame(f symbolication.Frame, line, col int) (Token, bool) {
	tok, ok := lm.m.PositionAt(line, col)
	if !ok || !tok.HasSource {
		return tok, false
	}
	name, named := lm.scopeName(tok.GenLine, col)
	if !named {
		name = f.Function
	}
	tok.Name = name
	return tok, true
}

// scopeName is the name of the scope enclosing a generated position
// (0-based) whose line has a mapping there; false without scopes, outside
// every function, or on a line the map has nothing for (a caller's line).
func (lm *loadedMap) scopeName(line, col int) (string, bool) {
	if lm.scopes == nil {
		return "", false
	}
	if _, ok := lm.m.At(line, col); !ok {
		return "", false
	}
	return lm.scopes.FunctionName(line, col, lm.m)
}

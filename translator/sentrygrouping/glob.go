package sentrygrouping

import (
	"regexp"
	"strings"
)

// glob is a stack trace rule's pattern as Sentry's glob_match reads it
// with double stars: ** is any text, * any text without a slash, ? one
// character. The rules run over every frame, so the shapes they mostly
// take (a name, a prefix, a folder anywhere, a suffix) are string tests;
// the others an RE2 expression.
type glob struct {
	kind globKind
	lit  string
	// noSlashAfter: after the prefix comes a single *, which spans no
	// slash.
	noSlashAfter bool
	re           *regexp.Regexp
	// need is the longest literal part of an expression's pattern: a
	// value without it cannot match, and most values are ruled out by
	// this test alone.
	need string
}

type globKind uint8

const (
	globExact    globKind = iota
	globPrefix            // lit*, lit**
	globContains          // **lit**
	globSuffix            // **lit
	globRE
)

// compileGlob compiles a pattern, lowercased when ignoreCase (the values
// it is matched to are lowercased too).
func compileGlob(pattern string, ignoreCase bool) glob {
	if ignoreCase {
		pattern = strings.ToLower(pattern)
	}
	if g, ok := literalGlob(pattern); ok {
		return g
	}
	return glob{kind: globRE, re: globRegexp(pattern), need: longestLiteral(pattern)}
}

// literalKinds name a literal's test by the ** before and after it.
var literalKinds = map[[2]bool]globKind{
	{false, false}: globExact, {false, true}: globPrefix, {true, false}: globSuffix, {true, true}: globContains,
}

// literalGlob compiles the patterns that are a literal between optional
// **, or a literal and one *.
func literalGlob(pattern string) (glob, bool) {
	core, leading := strings.CutPrefix(pattern, "**")
	lit, trailing := strings.CutSuffix(core, "**")
	if !strings.ContainsAny(lit, "*?") {
		return glob{kind: literalKinds[[2]bool{leading, trailing}], lit: lit}, true
	}
	if p, ok := strings.CutSuffix(pattern, "*"); ok && !strings.ContainsAny(p, "*?") {
		return glob{kind: globPrefix, lit: p, noSlashAfter: true}, true
	}
	return glob{}, false
}

// longestLiteral is the longest run of a pattern without wildcards.
func longestLiteral(pattern string) string {
	longest := ""
	for part := range strings.FieldsFuncSeq(pattern, func(r rune) bool { return r == '*' || r == '?' }) {
		if len(part) > len(longest) {
			longest = part
		}
	}
	return longest
}

// globRegexp translates a pattern to an anchored RE2 expression.
func globRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case pattern[i] == '*':
			b.WriteString("[^/]*")
		case pattern[i] == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// match reports whether the glob matches v.
func (g *glob) match(v string) bool { return globMatchers[g.kind](g, v) }

var globMatchers = [...]func(g *glob, v string) bool{
	globExact:    func(g *glob, v string) bool { return v == g.lit },
	globPrefix:   (*glob).matchPrefix,
	globContains: func(g *glob, v string) bool { return strings.Contains(v, g.lit) },
	globSuffix:   func(g *glob, v string) bool { return strings.HasSuffix(v, g.lit) },
	globRE:       func(g *glob, v string) bool { return strings.Contains(v, g.need) && g.re.MatchString(v) },
}

func (g *glob) matchPrefix(v string) bool {
	rest, ok := strings.CutPrefix(v, g.lit)
	return ok && g.allowsRest(rest)
}

// matchPath matches a path, and a relative path also as if it began with
// a slash (Sentry retries "/" + path), without building that string for
// the shapes that need not.
func (g *glob) matchPath(p string) bool {
	if p == "" {
		return false
	}
	return g.match(p) || (!strings.HasPrefix(p, "/") && slashedMatchers[g.kind](g, p))
}

// slashedMatchers test "/" + p where p alone failed: a prefix or a
// part can then only match at the added slash, an exact or a suffix
// pattern only as the whole.
var slashedMatchers = [...]func(g *glob, p string) bool{
	globExact:    (*glob).isSlashed,
	globPrefix:   (*glob).matchSlashedStart,
	globContains: (*glob).matchSlashedStart,
	globSuffix:   (*glob).isSlashed,
	globRE:       (*glob).matchSlashedRE,
}

func (g *glob) isSlashed(p string) bool { return g.lit == "/"+p }

func (g *glob) matchSlashedStart(p string) bool {
	rest, ok := strings.CutPrefix(g.lit, "/")
	if !ok || !strings.HasPrefix(p, rest) {
		return false
	}
	return g.allowsRest(p[len(rest):])
}

// allowsRest reports whether what follows a prefix may: anything after
// **, no slash after a single *.
func (g *glob) allowsRest(rest string) bool {
	return !g.noSlashAfter || !strings.Contains(rest, "/")
}

func (g *glob) matchSlashedRE(p string) bool {
	rest, slashFirst := strings.CutPrefix(g.need, "/")
	mayMatch := strings.Contains(p, g.need) || (slashFirst && strings.HasPrefix(p, rest))
	return mayMatch && g.re.MatchString("/"+p)
}

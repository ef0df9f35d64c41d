package jsscope

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// TestScopesMatchAcorn checks the scanner against a parser on real code:
// every scope acorn finds (testdata/bundler/scopes.mjs) must be one the
// index has, starting where acorn's starts and ending where it ends (the
// index ends a scope at the next token, so only white space and comments
// may lie between), named as scopes.mjs names it walking acorn's tree
// with Sentry's rules; and the index must have no other. The code is the
// 2 MB minified bundle of BenchmarkParseBundle and large libraries as
// their packages ship them, unminified.
func TestScopesMatchAcorn(t *testing.T) {
	node := testenv.LookPath(t, "node", "nodejs")
	installModules(t, testenv.LookPath(t, "npm", "npm"))
	dir := t.TempDir()
	cmd := exec.Command(node, "build.mjs", "--large", dir)
	cmd.Dir = bundlerDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs --large: %v\n%s", err, out)
	}
	files := []struct{ name, path string }{
		{"minified bundle", filepath.Join(dir, "large.js")},
		{"@babel/parser", filepath.Join(bundlerDir, "node_modules/@babel/parser/lib/index.js")},
		{"rollup", filepath.Join(bundlerDir, "node_modules/rollup/dist/es/shared/node-entry.js")},
		{"terser", filepath.Join(bundlerDir, "node_modules/terser/dist/bundle.min.js")},
		{"acorn", filepath.Join(bundlerDir, "node_modules/acorn/dist/acorn.js")},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			file := f.path
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			want := acornScopes(t, node, file)
			x, err := Parse(src)
			require.NoError(t, err)
			offsets := newOffsets(src)
			mismatches, misnamed := 0, 0
			for _, s := range want {
				got, ok := x.Lookup(int(s.start.Line), int(s.start.Column))
				if !ok || got.Start != s.start || !offsets.onlySpaceBetween(s.end, got.End) {
					if mismatches++; mismatches <= 10 {
						t.Errorf("acorn's scope %v–%v: the index has %v–%v (found %v)", s.start, s.end, got.Start, got.End, ok)
					}
					continue
				}
				if name := minifiedName(got); name != s.name {
					if misnamed++; misnamed <= 10 {
						t.Errorf("scope at %v: named %q, Sentry's rules on acorn's tree name it %q", s.start, name, s.name)
					}
				}
			}
			assert.Zero(t, mismatches, "scopes acorn finds that the index does not")
			assert.Zero(t, misnamed, "scopes named otherwise than by Sentry's rules on acorn's tree")
			assert.Equal(t, len(want), x.Len(), "scopes in the index")
			t.Logf("%d bytes: %d scopes, as acorn finds them", len(src), x.Len())
		})
	}
}

// acornScope is a scope as scopes.mjs finds it.
type acornScope struct {
	start, end Position
	name       string
}

// minifiedName is a scope's name as written in the source, before a
// source map: its components' text, hidden ones left out.
func minifiedName(s Scope) string {
	var b strings.Builder
	for _, c := range s.Name {
		if !c.Hidden {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// acornScopes runs testdata/bundler/scopes.mjs on a file.
func acornScopes(t *testing.T, node, file string) []acornScope {
	t.Helper()
	abs, err := filepath.Abs(file)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "scopes.json")
	cmd := exec.Command(node, "scopes.mjs", abs, out)
	cmd.Dir = bundlerDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node scopes.mjs %s: %v\n%s", file, err, b)
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var raw [][5]any
	require.NoError(t, json.Unmarshal(b, &raw))
	scopes := make([]acornScope, len(raw))
	for i, r := range raw {
		num := func(k int) int32 { return int32(r[k].(float64)) }
		scopes[i] = acornScope{start: Position{num(0), num(1)}, end: Position{num(2), num(3)}, name: r[4].(string)}
	}
	return scopes
}

// offsets turns positions back into byte offsets of a source.
type offsets struct {
	src       []byte
	lineStart []int
	// ascii says which lines are ASCII only: there a column is a byte.
	ascii []bool
}

func newOffsets(src []byte) offsets {
	o := offsets{src: src, lineStart: []int{0}, ascii: []bool{true}}
	for i := 0; i < len(src); i++ {
		if src[i] >= utf8.RuneSelf {
			o.ascii[len(o.ascii)-1] = false
		}
		if isLineTerminatorAt(src, i) {
			i += lineTerminatorLen(src, i) - 1
			o.lineStart = append(o.lineStart, i+1)
			o.ascii = append(o.ascii, true)
		}
	}
	return o
}

// offset is the byte offset of a position (UTF-16 column).
func (o offsets) offset(p Position) int {
	off := o.lineStart[p.Line]
	if o.ascii[p.Line] {
		return off + int(p.Column)
	}
	for col := int32(0); col < p.Column; {
		r, size := utf8.DecodeRune(o.src[off:])
		off += size
		col++
		if r > 0xffff {
			col++
		}
	}
	return off
}

// onlySpaceBetween reports whether only white space and comments lie
// from position a to position b.
func (o offsets) onlySpaceBetween(a, b Position) bool {
	from, to := o.offset(a), o.offset(b)
	lx := lexer{src: o.src[:to], i: from}
	return lx.skipSpace() == nil && lx.i == to
}

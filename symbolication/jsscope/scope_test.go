package jsscope

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// at returns the position of the first occurrence of marker in src as a
// source map counts it: 0-based line, UTF-16 column.
func at(t *testing.T, src, marker string) (int, int) {
	t.Helper()
	i := strings.Index(src, marker)
	require.GreaterOrEqualf(t, i, 0, "marker %q not in source", marker)
	line := strings.Count(src[:i], "\n")
	lineText := src[strings.LastIndex(src[:i], "\n")+1 : i]
	return line, len(utf16.Encode([]rune(lineText)))
}

// nameAround is the unresolved name of the innermost scope around marker:
// its components' minified text, "(anonymous)" for an anonymous scope,
// "(top)" outside every scope.
func nameAround(t *testing.T, x *Index, src, marker string) string {
	t.Helper()
	line, col := at(t, src, marker)
	s, ok := x.Lookup(line, col)
	switch {
	case !ok:
		return "(top)"
	case s.Anonymous():
		return "(anonymous)"
	}
	var b strings.Builder
	for _, c := range s.Name {
		if !c.Hidden {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func TestScopeNames(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[string]string // marker → name
	}{
		{
			name: "declarations and named expressions",
			src:  `function outer(){ "m1"; return function inner(){ "m2" } } "m3"`,
			want: map[string]string{`"m1"`: "outer", `"m2"`: "inner", `"m3"`: "(top)"},
		},
		{
			name: "anonymous functions take the variable or target they are assigned to",
			src:  `var va = function(){ "m1" }; let vb = class { m(){ "m2" } }; const vc = () => { "m3" }; gx = function(){ "m4" }; a.b.c = () => { "m5" }; this.h = function(){ "m6" }`,
			want: map[string]string{`"m1"`: "va", `"m2"`: "vb.m", `"m3"`: "vc", `"m4"`: "gx", `"m5"`: "a.b.c", `"m6"`: "this.h"},
		},
		{
			name: "the innermost assignment names",
			src:  `p = q = function(){ "m1" }; r = s.t = () => { "m2" }`,
			want: map[string]string{`"m1"`: "q", `"m2"`: "s.t"},
		},
		{
			name: "an anonymous callback stays anonymous, unless its call is assigned",
			src:  `list.forEach(function(){ "m1" }); const deb = debounce(() => { "m2" }); x = 1, run(() => { "m3" })`,
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "deb", `"m3"`: "(anonymous)"},
		},
		{
			name: "object literals",
			src:  `const o = { kf: function nf(){ "m1" }, ka: function(){ "m2" }, kr: () => { "m3" }, mm(){ "m4" }, get g(){ "m5" }, set g(v){ "m6" }, "s-k": function(){ "m7" }, deep: { in(){ "m8" } } }`,
			want: map[string]string{`"m1"`: "o.nf", `"m2"`: "o.ka", `"m3"`: "o.kr", `"m4"`: "o.mm", `"m5"`: "get o.g", `"m6"`: "set o.g", `"m7"`: "o", `"m8"`: "o.deep.in"},
		},
		{
			name: "an object nothing names",
			src:  `register({ handler(){ "m1" }, cb: function(){ "m2" } })`,
			want: map[string]string{`"m1"`: "<object>.handler", `"m2"`: "<object>.cb"},
		},
		{
			name: "classes",
			src:  `class Cls extends Base { constructor(){ super(); "m1" } static st(){ "m2" } me(){ "m3" } #pv(){ "m4" } get ac(){ "m5" } async as(){ "m6" } *gen(){ "m7" } fld = () => { "m8" } ["comp"](){ "m9" } }`,
			want: map[string]string{`"m1"`: "new Cls", `"m2"`: "Cls.st", `"m3"`: "Cls.me", `"m4"`: "Cls.#pv", `"m5"`: "get Cls.ac", `"m6"`: "Cls.as", `"m7"`: "Cls.gen", `"m8"`: "Cls", `"m9"`: "Cls.<computed>"},
		},
		{
			name: "class expressions",
			src:  `ns.Kls = class { me(){ "m1" } }; var Outer = class Inner { me(){ "m2" } }`,
			want: map[string]string{`"m1"`: "ns.Kls.me", `"m2"`: "Outer.Inner.me"},
		},
		{
			name: "computed members",
			src:  `Pr.proto[7] = () => { "m1" }; Pr.proto['name'] = () => { "m2" }; Pr.proto[key] = () => { "m3" }; Pr.proto[1 + 1] = () => { "m4" }`,
			want: map[string]string{`"m1"`: "Pr.proto[7]", `"m2"`: `Pr.proto["name"]`, `"m3"`: "Pr.proto[key]", `"m4"`: "Pr.proto[<computed>]"},
		},
		{
			name: "an arrow's expression body ends where its expression does",
			src:  `const f1 = a => a + "m1", f2 = b => c ? "m2" : d; e = x ? y => "m3" : "m4"; g(h => "m5", "m6")`,
			want: map[string]string{`"m1"`: "f1", `"m2"`: "f2", `"m3"`: "e", `"m4"`: "(top)", `"m5"`: "(anonymous)", `"m6"`: "(top)"},
		},
		{
			name: "an assignment in a branch of a conditional ends with the branch",
			src:  `c ? ta = 1 : run(() => { "m1" }); tb = c ? () => { "m2" } : () => { "m3" }; c ? 1 : tc = () => { "m4" }`,
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "tb", `"m3"`: "tb", `"m4"`: "tc"},
		},
		{
			name: "an enclosing arrow stops the name",
			src:  `outer = a => run(function(){ "m1" }); k = a => inner = function(){ "m2" }`,
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "inner"},
		},
		{
			name: "default parameters are inside their function",
			src:  `function withDef(a = () => { "m1" }) { "m2" }`,
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "withDef"},
		},
		{
			name: "async functions and arrows",
			src:  `async function af(){ "m1" } const aa = async (x) => { "m2" }, ab = async y => "m3"`,
			want: map[string]string{`"m1"`: "af", `"m2"`: "aa", `"m3"`: "ab"},
		},
		{
			name: "an immediately invoked function is anonymous",
			src:  `(function(){ "m1"; return () => { "m2" } })()`,
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "(anonymous)"},
		},
		{
			name: "regular expressions, divisions, templates and comments",
			src:  "var rx = function(){ return /[}{'\"`]/.test(s) / 2 }; /* } { */ var dv = a / b / function(){ \"m1\" }; var tp = `${ (() => { \"m2\" })() }}{`; // }\nfunction after(){ \"m3\" }",
			want: map[string]string{`"m1"`: "dv", `"m2"`: "tp", `"m3"`: "after"},
		},
		{
			name: "a regular expression after a control statement's condition or a block",
			src:  `if (ok) /}/.test(s); { } /{/.exec(s); function fr(){ "m1" }`,
			want: map[string]string{`"m1"`: "fr"},
		},
		{
			name: "automatic semicolon insertion ends an arrow and a binding",
			src:  "const as1 = () => 1\nrun(function(){ \"m1\" })\nvar bound = 2\nlist.map(() => { \"m2\" })",
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "(anonymous)"},
		},
		{
			name: "keywords as property names",
			src:  `obj.class = function(){ "m1" }; var kw = { function: 1, class(){ "m2" }, get: function(){ "m3" } }; x.return / 2`,
			want: map[string]string{`"m1"`: "obj.class", `"m2"`: "kw.class", `"m3"`: "kw.get"},
		},
		{
			name: "destructuring defaults are named by nothing",
			src:  `const { da = () => { "m1" }, db: { dc = function(){ "m2" } } } = opts; function dp({ dd = () => { "m3" } }) { "m4" } const dv = ({ de = 1 }) => { "m5" }`,
			want: map[string]string{`"m1"`: "(anonymous)", `"m2"`: "(anonymous)", `"m3"`: "(anonymous)", `"m4"`: "dp", `"m5"`: "dv"},
		},
		{
			name: "bindings inside a function's body",
			src:  `(() => { var ia = function(){ "m1" }, ib = class { m(){ "m2" } }; ic = () => { "m3" }; this.id = function(){ "m4" }; run(function(){ "m5" }) })(); function outer(){ let ie = () => { "m6" } }`,
			want: map[string]string{`"m1"`: "ia", `"m2"`: "ib.m", `"m3"`: "ic", `"m4"`: "this.id", `"m5"`: "(anonymous)", `"m6"`: "ie"},
		},
		{
			name: "case blocks and labels are blocks",
			src:  `switch (v) { case 1: { var sw = function(){ "m1" } } } lbl: { var lb = () => { "m2" } }`,
			want: map[string]string{`"m1"`: "sw", `"m2"`: "lb"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Parse([]byte(tt.src))
			require.NoError(t, err)
			for marker, want := range tt.want {
				assert.Equalf(t, want, nameAround(t, x, tt.src, marker), "scope around %s", marker)
			}
		})
	}
}

func TestPositionsCountUTF16AndLineTerminators(t *testing.T) {
	tests := []struct {
		name, src, marker string
		want              Position
	}{
		{"astral characters count two units", "var s = '😀😀'; function f(){ \"m\" }", `"m"`, Position{0, 30}},
		{"CRLF ends a line once", "var a = 1;\r\nvar b = 2;\r\nfunction f(){ \"m\" }", `"m"`, Position{2, 14}},
		{"a line separator ends a line", "var a = 1;\u2028function f(){ \"m\" }", `"m"`, Position{1, 14}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Parse([]byte(tt.src))
			require.NoError(t, err)
			i := strings.Index(tt.src, tt.marker)
			var c positionCursor
			c.src = []byte(tt.src)
			pos := c.at(i)
			assert.Equal(t, tt.want, pos)
			s, ok := x.Lookup(int(pos.Line), int(pos.Column))
			require.True(t, ok, "marker at %v", pos)
			assert.Equal(t, "f", s.Name[0].Text)
		})
	}
}

func TestParseFailsClosed(t *testing.T) {
	tests := []struct{ name, src string }{
		{"unbalanced brace", `function f(){ `},
		{"closing bracket that closes nothing", `}`},
		{"mismatched brackets", `f(]`},
		{"unterminated string", `var s = "abc`},
		{"unterminated template", "var s = `abc${x}"},
		{"unterminated comment", `/* never closed`},
		{"unterminated regular expression", `var r = /abc`},
		{"function without a body", `function f() 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Parse([]byte(tt.src))
			require.ErrorIs(t, err, errSyntax)
			assert.Nil(t, x)
			_, ok := x.Lookup(0, 0)
			assert.False(t, ok, "a nil index names nothing")
		})
	}
}

package jsscope

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMap is a source map of line 0 only: its segments by generated
// column, looked up at or before a column as Map.At does.
type fakeMap []Mapping

func (m fakeMap) lookup(line, column int) (Mapping, bool) {
	i := sort.Search(len(m), func(i int) bool { return m[i].GenColumn > column }) - 1
	if line != 0 || i < 0 {
		return Mapping{}, false
	}
	return m[i], true
}

func seg(col int, origLine, origCol int, name string) Mapping {
	return Mapping{GenColumn: col, Source: "src/app.js", Line: origLine, Column: origCol, HasSource: true, Name: name}
}

func TestFunctionName(t *testing.T) {
	// The minified source, one line:
	//   0         1         2         3         4         5         6
	//   0123456789012345678901234567890123456789012345678901234567890123456789
	const src = `function a(){"m1"}var b=class c{d(){"m2"}};e.f=function(){"m3"};[].map(function(){"m4"});"m5"`
	tests := []struct {
		name   string
		segs   fakeMap
		marker string
		want   string
		named  bool
	}{
		{"the map's name of the token", fakeMap{seg(9, 1, 9, "loadUser")}, `"m1"`, "loadUser", true},
		{"a token without a mapping keeps its minified text", nil, `"m1"`, "a", true},
		{
			"a segment one column before the token counts",
			fakeMap{seg(8, 1, 9, "loadUser")}, `"m1"`, "loadUser", true,
		},
		{
			"a segment further before does not",
			fakeMap{seg(7, 1, 9, "loadUser")}, `"m1"`, "a", true,
		},
		{
			"the name of the segment before, at the same original position",
			fakeMap{seg(0, 1, 0, "loadUser"), seg(9, 1, 0, "")}, `"m1"`, "loadUser", true,
		},
		{
			"not the name of the segment before at another original position",
			fakeMap{seg(8, 1, 0, "other"), seg(9, 1, 9, "")}, `"m1"`, "a", true,
		},
		{
			"a class expression's own name written once with its binding's (esbuild's var X = class _X)",
			fakeMap{seg(22, 5, 13, "Cart"), seg(30, 5, 13, "_Cart"), seg(32, 6, 2, "")}, `"m2"`, "Cart.d", true,
		},
		{
			"a class expression's own name kept when it is another identifier",
			fakeMap{seg(22, 5, 4, "Outer"), seg(30, 5, 20, "Inner"), seg(32, 6, 2, "")}, `"m2"`, "Outer.Inner.d", true,
		},
		{
			"a member target, the kept property name as it is",
			fakeMap{seg(43, 9, 0, "api")}, `"m3"`, "api.f", true,
		},
		{"an anonymous callback", nil, `"m4"`, Anonymous, true},
		{"top-level code", nil, `"m5"`, "", false},
	}
	x, err := Parse([]byte(src))
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, col := at(t, src, tt.marker)
			got, named := FunctionName(x, line, col, tt.segs.lookup)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.named, named)
		})
	}
}

func TestFunctionNameDartAsyncBody(t *testing.T) {
	const src = `var a=function(){"m"}`
	x, err := Parse([]byte(src))
	require.NoError(t, err)
	line, col := at(t, src, `"m"`)
	m := fakeMap{seg(4, 1, 0, "$async$fetch"), seg(17, 2, 0, "fetch")}
	got, named := FunctionName(x, line, col, m.lookup)
	assert.True(t, named)
	assert.Equal(t, "fetch", got, "a Dart async body is named by the frame's own segment")
}

func TestFoldName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"foo", "foo"},
		{"foo.foo", "foo.foo"},
		{"foo.foo.foo", "{foo#2}.foo"},
		{"bar.foo.foo", "bar.foo.foo"},
		{"bar.foo.foo.foo", "bar.{foo#2}.foo"},
		{"bar.bar.bar.foo.foo.onError", "{bar#3}.{foo#2}.onError"},
		{"bar.foo.foo.bar.bar.onError", "bar.{foo#2}.{bar#2}.onError"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, FoldName(tt.in), tt.in)
	}
}

package proguard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shopMapping is what R8 writes for a small shop app: a class with R8's
// source-file metadata, a method `total` whose minified lines 5 hold the
// inlined bodies of `Item.price` (another class) and `applyDiscount`, two
// methods renamed to the same `b` with disjoint ranges, an unranged
// companion method, a ProGuard-style range without original lines, and a
// field.
const shopMapping = `# compiler: R8
# compiler_version: 8.2.42
# min_api: 24
# pg_map_id: 5b46fdc
# common_typos_disable
# {"id":"com.android.tools.r8.mapping","version":"2.2"}
com.example.shop.Cart -> a.a:
# {"id":"sourceFile","fileName":"Cart.kt"}
    java.util.List items -> a
    1:1:void <init>():8:8 -> <init>
    1:4:int total(java.util.List):12:15 -> a
    5:5:long com.example.shop.Item.price():6:6 -> a
    5:5:int applyDiscount(int):31 -> a
    5:5:int total(java.util.List):16 -> a
    6:8:int total(java.util.List):17:19 -> a
    9:9:void log(java.lang.String):40:40 -> b
    1:3:void checkout():50:52 -> b
    10:12:void legacy() -> c
com.example.shop.Item -> a.b:
# {"id":"sourceFile","fileName":"Item.java"}
    1:3:long price():5:7 -> a
com.example.shop.Cart$Companion -> a.c:
    com.example.shop.Cart create() -> a
`

func TestRemap(t *testing.T) {
	m, err := Parse(strings.NewReader(shopMapping))
	require.NoError(t, err)
	require.Zero(t, m.SkippedLines())

	tests := []struct {
		name          string
		class, method string
		line          int
		want          []Frame
	}{
		{"first range maps line by line", "a.a", "a", 2, []Frame{{"com.example.shop.Cart", "total", "Cart.kt", 13}}},
		{"range end", "a.a", "a", 4, []Frame{{"com.example.shop.Cart", "total", "Cart.kt", 15}}},
		{"inlined from two methods, innermost first", "a.a", "a", 5, []Frame{
			{"com.example.shop.Item", "price", "Item.java", 6}, // its own sourceFile metadata
			{"com.example.shop.Cart", "applyDiscount", "Cart.kt", 31},
			{"com.example.shop.Cart", "total", "Cart.kt", 16},
		}},
		{"range after the inline group", "a.a", "a", 7, []Frame{{"com.example.shop.Cart", "total", "Cart.kt", 18}}},
		{"one name, two methods: first range", "a.a", "b", 2, []Frame{{"com.example.shop.Cart", "checkout", "Cart.kt", 51}}},
		{"one name, two methods: second range", "a.a", "b", 9, []Frame{{"com.example.shop.Cart", "log", "Cart.kt", 40}}},
		{"one name, two methods, no line: ambiguous", "a.a", "b", 0, []Frame{{"com.example.shop.Cart", "b", "Cart.kt", 0}}},
		{"no line, one method", "a.a", "a", 0, []Frame{{"com.example.shop.Cart", "total", "Cart.kt", 0}}},
		{"line outside every range: kept, as R8's retrace", "a.a", "a", 100, []Frame{{"com.example.shop.Cart", "a", "Cart.kt", 100}}},
		{"range without original lines keeps the line", "a.a", "c", 11, []Frame{{"com.example.shop.Cart", "legacy", "Cart.kt", 11}}},
		{"constructor", "a.a", "<init>", 1, []Frame{{"com.example.shop.Cart", "<init>", "Cart.kt", 8}}},
		{"unranged method; file from the outer class", "a.c", "a", 0, []Frame{{"com.example.shop.Cart$Companion", "create", "Cart.java", 0}}},
		{"unranged method with a line", "a.c", "a", 3, []Frame{{"com.example.shop.Cart$Companion", "create", "Cart.java", 0}}},
		{"method not in the mapping keeps its name", "a.a", "onCreate", 3, []Frame{{"com.example.shop.Cart", "onCreate", "Cart.kt", 3}}},
		{"class not in the mapping", "zz", "a", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, m.Remap(tt.class, tt.method, tt.line))
		})
	}
}

// TestInlinedFileName: code inlined from a class without source file
// metadata into a Kotlin class is named after its class with the Kotlin
// extension.
func TestInlinedFileName(t *testing.T) {
	m, err := Parse(strings.NewReader(`Main -> a.a:
# {"id":"sourceFile","fileName":"Main.kt"}
    2:2:void foo.bar.Baz.inlinee():42:42 -> a
    2:2:void main(java.lang.String[]):102 -> a
Plain -> a.b:
    2:2:void foo.bar.Baz.inlinee():42:42 -> a
    2:2:void run():7 -> a
`))
	require.NoError(t, err)
	assert.Equal(t, []Frame{{"foo.bar.Baz", "inlinee", "Baz.kt", 42}, {"Main", "main", "Main.kt", 102}}, m.Remap("a.a", "a", 2))
	assert.Equal(t, []Frame{{"foo.bar.Baz", "inlinee", "Baz.java", 42}, {"Plain", "run", "Plain.java", 7}}, m.Remap("a.b", "a", 2))
}

func TestClass(t *testing.T) {
	m, err := Parse(strings.NewReader(shopMapping))
	require.NoError(t, err)
	for obf, want := range map[string]string{"a.a": "com.example.shop.Cart", "a.b": "com.example.shop.Item", "a.c": "com.example.shop.Cart$Companion"} {
		got, ok := m.Class(obf)
		assert.True(t, ok, obf)
		assert.Equal(t, want, got)
	}
	_, ok := m.Class("com.example.shop.Cart")
	assert.False(t, ok, "original names are not obfuscated names")
}

// TestR8LineSemantics: R8's retrace conventions for members without a
// minified range: "0:0:" members form inline groups for frames without a
// line, plain members are alternatives with their single original line, and
// a range of original lines gives no line when nothing picks one.
func TestR8LineSemantics(t *testing.T) {
	m, err := Parse(strings.NewReader(`Main -> a:
    0:0:void method1(java.lang.String):42:42 -> a
    0:0:void main(java.lang.String[]):28 -> a
    1:1:void main(java.lang.String[]):153 -> a
    0:0:void method2(java.lang.String):42:44 -> b
    0:0:void main2(java.lang.String[]):29 -> b
    void foo(long):1:1 -> c
    void bar(int):3 -> d
    void baz():0:0 -> e
    void span(java.lang.String):42:44 -> f
`))
	require.NoError(t, err)
	tests := []struct {
		name   string
		method string
		line   int
		want   []Frame
	}{
		{"0:0 group for a frame without line", "a", 0, []Frame{{"Main", "method1", "Main.java", 42}, {"Main", "main", "Main.java", 28}}},
		{"ranged entry for a line", "a", 1, []Frame{{"Main", "main", "Main.java", 153}}},
		{"0:0 group, original range without a line", "b", 0, []Frame{{"Main", "method2", "Main.java", 0}, {"Main", "main2", "Main.java", 29}}},
		{"plain member, single original line", "c", 0, []Frame{{"Main", "foo", "Main.java", 1}}},
		{"plain member, line replaced by its original one", "d", 2, []Frame{{"Main", "bar", "Main.java", 3}}},
		{"plain member, :0:0 is unknown", "e", 8, []Frame{{"Main", "baz", "Main.java", 0}}},
		{"plain member, original range: unknown", "f", 1, []Frame{{"Main", "span", "Main.java", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, m.Remap("a", tt.method, tt.line))
		})
	}
}

// TestOverlappingRanges: when ranges of one obfuscated name overlap, the
// lookup falls back to file order instead of a binary search that could
// miss the first match.
func TestOverlappingRanges(t *testing.T) {
	m, err := Parse(strings.NewReader("A -> a:\n    1:10:void outer():1:10 -> a\n    5:6:void inner():20:21 -> a\n    30:40:void later():1:11 -> a\n"))
	require.NoError(t, err)
	assert.Equal(t, []Frame{{"A", "outer", "A.java", 5}}, m.Remap("a", "a", 5))
	assert.Equal(t, []Frame{{"A", "later", "A.java", 3}}, m.Remap("a", "a", 32))
}

func TestParseTolerance(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string
		skipped int
		classes int
	}{
		{"empty", "", "", 0, 0},
		{"comments only", "# compiler: R8\n\n# {\"id\":\"x\"}\n", "", 0, 0},
		{"CRLF", "A -> a:\r\n    1:2:void f():3:4 -> b\r\n", "", 0, 1},
		{"bad member skipped", "A -> a:\n    1:x:void f():3 -> b\n    void g() -> c\n", "", 1, 1},
		{"bad original line", "A -> a:\n    1:2:void f():z -> b\n", "", 1, 1},
		{"member before any class", "    void g() -> c\nA -> a:\n", "", 1, 1},
		{"bad class drops its members", "A -> :\n    void g() -> c\nB -> b:\n", "", 2, 1},
		{"end before start", "A -> a:\n    5:2:void f() -> b\n", "", 1, 1},
		{"not a mapping", "hello world\nthis is text\n", "no class mapping", 0, 0},
		{"line too long", "A -> a:\n    void " + strings.Repeat("x", maxLineBytes) + "() -> b\n", "longer than", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(strings.NewReader(tt.input))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.skipped, m.SkippedLines())
			assert.Len(t, m.classes, tt.classes)
		})
	}
}

func TestOutlineMetadata(t *testing.T) {
	input := `outline.Class -> a:
    1:2:int outline():0:0 -> a
# {"id":"com.android.tools.r8.outline"}
some.Class -> b:
    4:4:int callsite():0:0 -> a
# {"id":"com.android.tools.r8.outlineCallsite","positions":{"1":10,"2":11,"x":3},"outline":"La;a()I"}
    10:11:int callsite():40:41 -> a
`
	m, err := Parse(strings.NewReader(input))
	require.NoError(t, err)
	assert.True(t, m.classes["a"].methods["a"][0].outline)
	assert.Equal(t, map[int32]int32{1: 10, 2: 11}, m.classes["b"].methods["a"][0].outlineCallsite)
}

func TestSizeGrowsWithContent(t *testing.T) {
	small, err := Parse(strings.NewReader("A -> a:\n    1:1:void f():1 -> a\n"))
	require.NoError(t, err)
	big, err := Parse(strings.NewReader(shopMapping))
	require.NoError(t, err)
	assert.Positive(t, small.Size())
	assert.Greater(t, big.Size(), small.Size())
	assert.Greater(t, big.Size(), big.stringBytes, "records and maps count, not only strings")
}

// TestUUIDOf checks the content UUID against sentry-cli's own upload test
// vectors (the same bytes it uploads as /proguard/<uuid>.txt).
func TestUUIDOf(t *testing.T) {
	tests := []struct {
		content, want string
	}{
		{"void\n", "5db7294d-87fc-5726-a5c0-4a90679657a5"},
		{"HelloWorld -> HelloWorld:\n" +
			"# {\"fileName\":\"HelloWorld.java\",\"id\":\"sourceFile\"}\n" +
			"    1:1:void <init>() -> <init>\n" +
			"    3:4:void main(java.lang.String[]) -> main\n", "c038584d-c366-570c-ad1e-034fa0d194d7"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, UUIDOf([]byte(tt.content)))
	}
	assert.Equal(t, "4f44f30f-24be-53d0-bab6-f47c7120ad6c", formatUUID(uuidV5(dnsNamespace, []byte("guardsquare.com"))),
		"the name space is uuid5(DNS, guardsquare.com)")
}

// outlineMapping is R8's outline example: outline.Class.outline is an
// outline; outlineCaller calls it at minified line 27, where the outline's
// positions 1 and 2 stand for the caller's minified lines 4 and 5.
const outlineMapping = `# compiler: R8
# compiler_version: 2.0
outline.Class -> a:
    1:2:int outline() -> a
# { "id":"com.android.tools.r8.outline" }
some.Class -> b:
    4:4:int outlineCaller(int):98:98 -> s
    5:5:int outlineCaller(int):100:100 -> s
    27:27:int outlineCaller(int):0:0 -> s
# { "id":"com.android.tools.r8.outlineCallsite", "positions": { "1": 4, "2": 5 }, "outline":"La;a()I"}
    30:30:void main(java.lang.String[]):7:7 -> t
`

func TestRemapStackOutlines(t *testing.T) {
	m, err := Parse(strings.NewReader(outlineMapping))
	require.NoError(t, err)
	tests := []struct {
		name  string
		stack []StackFrame
		want  []Frame
	}{
		{"outline position 1", []StackFrame{{"a", "a", 1}, {"b", "s", 27}, {"b", "t", 30}}, []Frame{
			{"some.Class", "outlineCaller", "Class.java", 98},
			{"some.Class", "main", "Class.java", 7},
		}},
		{"outline position 2", []StackFrame{{"a", "a", 2}, {"b", "s", 27}}, []Frame{
			{"some.Class", "outlineCaller", "Class.java", 100},
		}},
		{"no outline: the call site line itself", []StackFrame{{"b", "s", 4}}, []Frame{
			{"some.Class", "outlineCaller", "Class.java", 98},
		}},
		{"unknown frames kept", []StackFrame{{"java.lang.Thread", "run", 12}, {"b", "t", 30}}, []Frame{
			{"java.lang.Thread", "run", "", 12},
			{"some.Class", "main", "Class.java", 7},
		}},
		{"outline position the call site does not list", []StackFrame{{"a", "a", 9}, {"b", "s", 27}}, []Frame{
			{"some.Class", "outlineCaller", "Class.java", 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, m.RemapStack(tt.stack))
		})
	}
}

// TestRemapStackInlineInOutline: the call site of an outline is itself
// inlined code: the mapped line expands into the inline group.
func TestRemapStackInlineInOutline(t *testing.T) {
	m, err := Parse(strings.NewReader(`outline.Class -> a:
    1:2:int outline():0 -> a
# {"id":"com.android.tools.r8.outline"}
some.Class -> b:
    1:1:void foo.bar.Baz.qux():42:42 -> s
    4:5:int foo.bar.baz.outlineCaller(int):98:99 -> s
    4:5:int outlineCaller(int):24 -> s
    27:27:int outlineCaller(int):0:0 -> s
# {"id":"com.android.tools.r8.outlineCallsite","positions":{"1":4,"2":5}}
`))
	require.NoError(t, err)
	assert.Equal(t, []Frame{
		{"foo.bar.baz", "outlineCaller", "baz.java", 99},
		{"some.Class", "outlineCaller", "Class.java", 24},
	}, m.RemapStack([]StackFrame{{"a", "a", 2}, {"b", "s", 27}}))
}

package sourcemap

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/complexityguard"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// smallMap maps line 1 of a bundle to a.js (below): column 0 to 1:0,
// column 10 to 3:4 naming `callee` (a call inside inner), column 20 to 6:2
// (the call of inner, in outer), column 30 to no source. Made with Mozilla's
// SourceMapGenerator.
const smallMap = `"version":3,"sources":["a.js"],"names":["callee"],"mappings":"AAAA,UAEIA,UAGF,U","file":"index.android.bundle"`

// smallFunctionMap is metro-source-map's generateFunctionMap of a.js:
//
//	var x = 1;
//	function outer() {
//	  function inner() {
//	    callee();
//	  }
//	  inner();
//	}
const smallFunctionMap = `{"names":["<global>","outer","inner"],"mappings":"AAA;ACC;ECC;GDE;CDE"}`

func TestHermesFrameOf(t *testing.T) {
	maps := map[string]string{
		"function map":      `{` + smallMap + `,"x_facebook_sources":[[` + smallFunctionMap + `]]}`,
		"offsets only":      `{` + smallMap + `,"x_hermes_function_offsets":{"0":[0,10]}}`,
		"broken function":   `{` + smallMap + `,"x_facebook_sources":[[{"names":["a"],"mappings":"!"}]],"x_hermes_function_offsets":{"0":[0]}}`,
		"source without fn": `{` + smallMap + `,"x_facebook_sources":[null]}`,
		"not hermes":        `{` + smallMap + `,"x_facebook_sources":null}`,
	}
	tests := []struct {
		mapName string
		colno   int // as the SDK sends it: the bytecode offset + 1
		want    Token
		ok      bool
	}{
		// The offset of the instruction itself, and one inside it.
		{mapName: "function map", colno: 11, ok: true, want: Token{Source: "a.js", Line: 2, Column: 4, Name: "inner"}},
		{mapName: "function map", colno: 16, ok: true, want: Token{Source: "a.js", Line: 2, Column: 4, Name: "inner"}},
		// After inner's range: outer again, not the `callee` token before.
		{mapName: "function map", colno: 21, ok: true, want: Token{Source: "a.js", Line: 5, Column: 2, Name: "outer"}},
		{mapName: "function map", colno: 1, ok: true, want: Token{Source: "a.js", Line: 0, Column: 0, Name: "<global>"}},
		// Generated code without a source (the module system's prelude).
		{mapName: "function map", colno: 31},
		// Without function maps the frame keeps the name Hermes gave it.
		{mapName: "offsets only", colno: 21, ok: true, want: Token{Source: "a.js", Line: 5, Column: 2, Name: "h"}},
		{mapName: "broken function", colno: 11, ok: true, want: Token{Source: "a.js", Line: 2, Column: 4, Name: "h"}},
		{mapName: "source without fn", colno: 11, ok: true, want: Token{Source: "a.js", Line: 2, Column: 4, Name: "h"}},
		// Any other map keeps the profilers' rule: the name token before
		// the column.
		{mapName: "not hermes", colno: 21, ok: true, want: Token{Source: "a.js", Line: 2, Column: 4, Name: "callee"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.mapName, tt.colno), func(t *testing.T) {
			m, err := Parse([]byte(maps[tt.mapName]))
			require.NoError(t, err)
			assert.Equal(t, tt.mapName != "not hermes", m.IsHermes())
			tok, ok := m.frameOf(symbolication.Frame{Function: "h", Line: 1, Column: tt.colno})
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			tt.want.HasSource = true
			tok.GenLine, tok.GenColumn = 0, 0
			assert.Equal(t, tt.want, tok)
		})
	}
}

// TestHermesRecordedFrames resolves the frames of one recorded run of the
// Hermes test app (testdata/hermes/recorded: the composed map, the frames of
// the error it threw (stack.txt) and of its sampling profile, and what
// node's source-map and metro-symbolicate answered for them), so that the
// rules are checked where node and the Hermes runtime are not installed.
// TestHermesRealFrames makes all of it afresh.
func TestHermesRecordedFrames(t *testing.T) {
	b, err := os.ReadFile("testdata/hermes/recorded/index.android.bundle.map")
	require.NoError(t, err)
	m, err := Parse(b)
	require.NoError(t, err)
	require.True(t, m.IsHermes())
	type recorded struct {
		Frame struct {
			Function      string
			Lineno, Colno int
		}
		Want *struct {
			Function, File string
			Line, Column   int
		}
	}
	var runs map[string][]recorded
	b, err = os.ReadFile("testdata/hermes/recorded/frames.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &runs))
	require.NotEmpty(t, runs["error"])
	require.NotEmpty(t, runs["profile"])
	for name, frames := range runs {
		for _, r := range frames {
			t.Run(fmt.Sprintf("%s/%s@%d", name, r.Frame.Function, r.Frame.Colno), func(t *testing.T) {
				tok, ok := m.frameOf(symbolication.Frame{Function: r.Frame.Function, Line: r.Frame.Lineno, Column: r.Frame.Colno})
				if r.Want == nil {
					assert.False(t, ok)
					return
				}
				require.True(t, ok)
				assert.Equal(t, *r.Want, struct {
					Function, File string
					Line, Column   int
				}{tok.Name, tok.Source, tok.Line + 1, tok.Column + 1})
			})
		}
	}
}

func TestFunctionMapNameAt(t *testing.T) {
	// testdata/hermes/app/src/cart.js's function map, by generateFunctionMap.
	cart, err := decodeFunctionMap(
		[]string{"<global>", "Cart", "Cart#constructor", "Cart#total", "items.map$argument_0", "items.map.reduce$argument_0"},
		"AAA;ACE;ECC;GDE;EEE;WCE;ODE;cEC,2BF;GFE;CDC")
	require.NoError(t, err)
	twoAtOnce, err := decodeFunctionMap([]string{"outer", "callback"}, "AAA,AC")
	require.NoError(t, err)
	late, err := decodeFunctionMap([]string{"f"}, "AAE")
	require.NoError(t, err)
	tests := []struct {
		name         string
		fm           *functionMap
		line, column int // 1-based line, 0-based column, as the map has them
		want         string
		ok           bool
	}{
		{name: "top level", fm: cart, line: 1, column: 0, want: "<global>", ok: true},
		{name: "constructor body", fm: cart, line: 5, column: 4, want: "Cart#constructor", ok: true},
		{name: "between methods", fm: cart, line: 7, column: 0, want: "Cart", ok: true},
		{name: "method body", fm: cart, line: 9, column: 4, want: "Cart#total", ok: true},
		{name: "map callback", fm: cart, line: 11, column: 15, want: "items.map$argument_0", ok: true},
		{name: "arrow callback", fm: cart, line: 13, column: 30, want: "items.map.reduce$argument_0", ok: true},
		// The arrow's range ends at column 41: the method again from there.
		{name: "after the arrow", fm: cart, line: 13, column: 41, want: "Cart#total", ok: true},
		{name: "after the class", fm: cart, line: 18, column: 0, want: "<global>", ok: true},
		{name: "two starting at once: the last", fm: twoAtOnce, line: 1, column: 0, want: "callback", ok: true},
		{name: "before the first", fm: late, line: 1, column: 5},
		{name: "at the first", fm: late, line: 3, column: 0, want: "f", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.fm.nameAt(tt.line-1, tt.column)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeFunctionMapRefuses(t *testing.T) {
	tests := []struct {
		name, mappings string
	}{
		{name: "one value", mappings: "A"},
		{name: "four values", mappings: "AAAA"},
		{name: "not base64", mappings: "A!A"},
		{name: "value cut short", mappings: "Ag"},
		{name: "name out of range", mappings: "AE"},
		{name: "negative name", mappings: "AD"},
		{name: "line before 1", mappings: "AAD"},
		{name: "negative column", mappings: "DAA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeFunctionMap([]string{"a", "b"}, tt.mappings)
			assert.Error(t, err)
		})
	}
}

func TestParseFacebookSources(t *testing.T) {
	tests := []struct {
		name, raw string
		sources   int
		functions []bool // whether each source has a function map
		wantErr   bool
	}{
		{name: "one per source", raw: `[[` + smallFunctionMap + `],null,[null],[]]`, sources: 4, functions: []bool{true, false, false, false}},
		{name: "fewer than sources", raw: `[[` + smallFunctionMap + `]]`, sources: 3, functions: []bool{true}},
		{name: "a broken one is left out", raw: `[[{"names":[],"mappings":"AAA"}],[` + smallFunctionMap + `],[7]]`, sources: 3, functions: []bool{false, true, false}},
		{name: "more than sources", raw: `[null,null]`, sources: 1, wantErr: true},
		{name: "not an array", raw: `{"a":1}`, sources: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFacebookSources(json.RawMessage(tt.raw), tt.sources)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			has := make([]bool, len(got))
			for i, fm := range got {
				has[i] = fm != nil
			}
			assert.Equal(t, tt.functions, has)
		})
	}
}

// TestComplexityGuardHermes is the complexity guard's row for what a Hermes
// map adds (internal/complexityguard's externalRows): the function maps of
// `x_facebook_sources`, decoded with the map, and every bytecode offset of
// the map looked up and named by them, at n and 8n functions.
func TestComplexityGuardHermes(t *testing.T) {
	complexityguard.CheckLinear(t, "functions of a Hermes map and frames looked up in it", 2000, func(_ testing.TB, n int) complexityguard.Sized {
		in := hermesGuardMap(n)
		want := make([]string, n)
		for i := range want {
			want[i] = fmt.Sprintf("f%d", i)
		}
		var size int64
		return complexityguard.Sized{
			Run: func() {
				m, err := Parse(in)
				if err != nil {
					t.Errorf("parse: %v", err)
					return
				}
				for col := 1; col <= n; col++ {
					if tok, ok := m.frameOf(symbolication.Frame{Function: "h", Line: 1, Column: col}); !ok || tok.Name != want[col-1] {
						t.Errorf("offset %d: %+v, %v", col-1, tok, ok)
						return
					}
				}
				size = m.Size()
			},
			Input:  func() int64 { return int64(len(in)) },
			Output: func() int64 { return size },
		}
	})
}

// hermesGuardMap is a Hermes map of n bytecode offsets, each on its own
// line of a.js, where function f<i> starts.
func hermesGuardMap(n int) []byte {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf(`"f%d"`, i)
	}
	return fmt.Appendf(nil, `{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA%s",`+
		`"x_facebook_sources":[[{"names":[%s],"mappings":"AAA%s"}]],"x_hermes_function_offsets":{"0":[0]}}`,
		strings.Repeat(",CACA", n-1), strings.Join(names, ","), strings.Repeat(";ACC", n-1))
}

// BenchmarkHermes measures what a Hermes map costs beside a plain one of
// the same segments: parsing 100,000 offsets with and without their
// function maps, and naming one frame by them warm.
func BenchmarkHermes(b *testing.B) {
	const n = 100_000
	withFunctions := hermesGuardMap(n)
	plain := []byte(`{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA` + strings.Repeat(",CACA", n-1) + `"}`)
	for _, bb := range []struct {
		name string
		in   []byte
	}{{"parse/plain", plain}, {"parse/function_maps", withFunctions}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.in)))
			for b.Loop() {
				if _, err := Parse(bb.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	m, err := Parse(withFunctions)
	require.NoError(b, err)
	b.Run("frame", func(b *testing.B) {
		b.ReportAllocs()
		col := 0
		for b.Loop() {
			col = col%n + 1
			if _, ok := m.frameOf(symbolication.Frame{Function: "h", Line: 1, Column: col}); !ok {
				b.Fatal("no frame")
			}
		}
	})
}

package complexityguard

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/jsscope"
)

// jsscopeRows guard the scope scanner of minified JavaScript: the
// processor parses every bundle it locates beside a source map, and a
// bundle is whatever a deployment's directory (or, scraped, a web server)
// holds.
func jsscopeRows() []row {
	parse := func(tb testing.TB, in []byte) (int64, int64) {
		x, err := jsscope.Parse(in)
		if err != nil {
			tb.Errorf("jsscope: %v", err)
			return 0, 0
		}
		return x.Size(), int64(x.Len())
	}
	// The index holds 60 to 90 bytes a scope (its extent, two bounds of
	// the position index, its own name part), and a scope takes at least
	// three bytes of source (a=>), five with a name of its own (a(){}):
	// at most 24 bytes a byte.
	indexBound := func(input int64) int64 { return 24*input + 64<<10 }
	return []row{
		{
			name: "jsscope_bundle_functions", dimension: "functions, classes, methods and arrows of a minified bundle", n: 400, clock: ThreadClock,
			fuzz:      []string{"symbolication/jsscope.FuzzParse"},
			build:     directRow(minifiedBundle, parse),
			maxOutput: indexBound,
		},
		{
			// Each scope's name walks the open brackets around it and
			// reads its assignment target: bounded per scope, whatever
			// the nesting or the length of the chain. From a thousand
			// levels up, the index's slices are past the doubling steps
			// that make a smaller pair's byte ratio swing (10.9× at 400
			// under the race detector).
			name: "jsscope_nesting", dimension: "nesting of objects, arrows and member chains around functions", n: 1000, clock: ThreadClock,
			build:     directRow(nestedBundle, parse),
			maxOutput: indexBound,
		},
	}
}

// minifiedBundle is n modules of the shapes a minifier writes.
func minifiedBundle(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `function a%d(e,t){return e.map(function(n){return n/2+/[}{]/.exec(t)})}`, i)
		fmt.Fprintf(&b, `var b%d=class c%d extends Object{constructor(){super(),this.x=()=>1}get v(){return 1}static s(e){return e?r=>r:`+"`${e}`"+`}};`, i, i)
		fmt.Fprintf(&b, `const d%d={k:async e=>{await e},m(){if(1)/x/.test("}")}},f%d=(e,t)=>e<t?e:t;`, i, i)
	}
	return b.Bytes()
}

// nestedBundle nests n object literals, n arrows and a member chain of n
// names around n functions each.
func nestedBundle(n int) []byte {
	var b bytes.Buffer
	b.WriteString("var o=")
	b.WriteString(strings.Repeat("{k:", n))
	b.WriteString(strings.Repeat("function(){},", n))
	b.WriteString("z:1")
	b.WriteString(strings.Repeat("}", n))
	b.WriteString(";var p=")
	b.WriteString(strings.Repeat("a=>", n))
	b.WriteString("1;")
	b.WriteString("q" + strings.Repeat(".m", n) + "=")
	b.WriteString(strings.Repeat("function(){}+", n))
	b.WriteString("1;")
	return b.Bytes()
}

package jsscope_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/jsscope"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap"
)

// A frame inside a minified esbuild bundle (symbolication/sourcemap's
// test build, a debug id injected by Sentry's plugin) is named by the
// scope around it.
func ExampleFunctionName() {
	bundle, err := os.ReadFile("../sourcemap/testdata/dist/app.min.js")
	if err != nil {
		panic(err)
	}
	raw, err := os.ReadFile("../sourcemap/testdata/dist/app.min.js.map")
	if err != nil {
		panic(err)
	}
	m, err := sourcemap.Parse(raw)
	if err != nil {
		panic(err)
	}
	scopes, err := jsscope.Parse(bundle)
	if err != nil {
		panic(err) // a caller names frames without scopes instead
	}
	lookup := func(line, column int) (jsscope.Mapping, bool) {
		t, ok := m.At(line, column)
		return jsscope.Mapping{
			GenLine: t.GenLine, GenColumn: t.GenColumn, Source: t.Source,
			Line: t.Line, Column: t.Column, HasSource: t.HasSource, Name: t.Name,
		}, ok
	}
	// Frames where an error would point: inside a loop of isPrime, in the
	// arrow held by hashText, in a method of the class Matrix. The
	// bundle's code is on its first line, inside the arrow function an
	// esbuild IIFE build wraps it in.
	for _, at := range []string{"t%e===0", "e=e*31", "return e*2"} {
		column := bytes.Index(bundle, []byte(at))
		name, ok := jsscope.FunctionName(scopes, 0, column, lookup)
		fmt.Println(name, ok)
	}
	// Output:
	// isPrime true
	// hashText true
	// Matrix.multiplyBy true
}

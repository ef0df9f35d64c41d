package sourcemap

import (
	"os"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
)

// FuzzParse: any input parses or fails with an error, and every lookup on a
// parsed map stays in bounds.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(bundlePath + ".map"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"version":3,"sources":["a.js"],"names":["f"],"mappings":"AAAA,EAAEA;AACA"}`))
	f.Add([]byte(`{"version":3,"sources":[null],"names":[],"mappings":";;gB,D"}`))
	f.Add([]byte(`{` + smallMap + `,"x_facebook_sources":[[` + smallFunctionMap + `]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		for l := -1; l <= min(m.Lines(), 64); l++ {
			for _, c := range []int{-1, 0, 1, 7, 1 << 20} {
				m.At(l, c)
				m.FunctionAt(l, c)
				m.frameOf(symbolication.Frame{Line: l, Column: c})
			}
		}
		m.functionAtColumn(3)
	})
}

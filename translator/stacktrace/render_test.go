package stacktrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name  string
		chain []Exception
		want  string
	}{
		{"empty chain", nil, ""},
		{"type only, no frames", []Exception{{Type: "Panic"}}, "Panic"},
		{"value only", []Exception{{Value: "boom"}}, "boom"},
		{"frames innermost first, file fallbacks", []Exception{{Type: "E", Value: "v", Frames: []Frame{
			{Function: "main", Module: "app.main", Lineno: 3},
			{Filename: "util.js", Lineno: 7, Colno: 2},
			{Function: "f", AbsPath: "/srv/a.js", Filename: "a.js", Lineno: 1, Colno: 9},
			{Function: "g", Colno: 4, AbsPath: "x.js"},
			{Function: "h"},
		}}}, "E: v\n    at h\n    at g (x.js)\n    at f (/srv/a.js:1:9)\n    at ? (util.js:7:2)\n    at main (app.main:3)"},
		{"a cause after the raised exception", []Exception{
			{Type: "Error", Value: "connect refused", Frames: []Frame{{Function: "connect", AbsPath: "db.js", Lineno: 2, Colno: 1}}},
			{Type: "TypeError", Value: "could not load", Frames: []Frame{{Function: "load", AbsPath: "app.js", Lineno: 9, Colno: 5}}},
		}, "TypeError: could not load\n    at load (app.js:9:5)\nCaused by: Error: connect refused\n    at connect (db.js:2:1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Render(tt.chain))
		})
	}
}

// TestRenderParseRoundTrip: Parse reads back what Render writes of a
// JavaScript chain.
func TestRenderParseRoundTrip(t *testing.T) {
	chains := map[string][]Exception{
		"one exception": {{Type: "TypeError", Value: "x is undefined", Frames: []Frame{
			{Function: "main", AbsPath: "/srv/app/main.js", Filename: "/srv/app/main.js", Lineno: 40, Colno: 3},
			{Function: "Cart.total", AbsPath: "https://shop.example/static/app.js", Filename: "https://shop.example/static/app.js", Lineno: 1, Colno: 48213},
		}}},
		"a chain": {
			{Type: "Error", Value: "connect ECONNREFUSED", Frames: []Frame{{Function: "connect", AbsPath: "/srv/db.js", Filename: "/srv/db.js", Lineno: 2, Colno: 11}}},
			{Type: "Error", Value: "could not load order", Frames: []Frame{{Function: "load", AbsPath: "/srv/app.js", Filename: "/srv/app.js", Lineno: 9, Colno: 5}}},
		},
	}
	for name, chain := range chains {
		t.Run(name, func(t *testing.T) {
			back, lang, ok := Parse(Render(chain))
			require.True(t, ok)
			assert.Equal(t, JavaScript, lang)
			assert.Equal(t, chain, back)
		})
	}
}

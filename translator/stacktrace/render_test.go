package stacktrace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestRenderMatchesSentryEvent renders the exception chain of every event
// of translator/sentryevent's testdata, read here from the JSON, and
// compares it with the exception.stacktrace that sentryevent writes for the
// same event: Render is the one renderer the receiver's text can move to.
func TestRenderMatchesSentryEvent(t *testing.T) {
	files, err := filepath.Glob("../sentryevent/testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	rendered := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			payload, err := os.ReadFile(file)
			require.NoError(t, err)
			ev, err := sentryevent.Decode(payload, sentrysignal.Options{})
			require.NoError(t, err)
			lr := plog.NewLogRecord()
			ev.PutLogRecord(lr, sentrysignal.Options{})
			want, ok := lr.Attributes().Get("exception.stacktrace")
			if !ok {
				t.Skip("sentryevent writes no exception.stacktrace for this event")
			}
			rendered++
			assert.Equal(t, want.Str(), Render(chainOfEvent(t, payload)))
		})
	}
	require.Positive(t, rendered, "some event has a stack trace")
}

// chainOfEvent reads exception.values out of an event's JSON, with Sentry's
// field names, independently of sentryevent.
func chainOfEvent(t *testing.T, payload []byte) []Exception {
	var ev struct {
		Exception json.RawMessage `json:"exception"`
	}
	require.NoError(t, json.Unmarshal(payload, &ev))
	var values []eventException
	var wrapped struct {
		Values []eventException `json:"values"`
	}
	// sentry-go sends a bare list; the others {"values": list}
	if json.Unmarshal(ev.Exception, &values) != nil {
		require.NoError(t, json.Unmarshal(ev.Exception, &wrapped))
		values = wrapped.Values
	}
	var chain []Exception
	for _, v := range values {
		e := Exception{Type: v.Type, Value: v.Value}
		for _, f := range v.Stacktrace.Frames {
			e.Frames = append(e.Frames, Frame{Function: f.Function, AbsPath: f.AbsPath, Filename: f.Filename, Module: f.Module, Lineno: f.Lineno, Colno: f.Colno})
		}
		chain = append(chain, e)
	}
	return chain
}

// eventException is one entry of exception.values, as far as the text
// shows it.
type eventException struct {
	Type       string `json:"type"`
	Value      string `json:"value"`
	Stacktrace struct {
		Frames []struct {
			Function string `json:"function"`
			AbsPath  string `json:"abs_path"`
			Filename string `json:"filename"`
			Module   string `json:"module"`
			Lineno   int    `json:"lineno"`
			Colno    int    `json:"colno"`
		} `json:"frames"`
	} `json:"stacktrace"`
}

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

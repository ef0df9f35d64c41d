package sentryevent

import (
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// withoutVars copies an exception or threads interface without the "vars"
// of its frames: local variables are personal data as much as "user".
// frame says x is an entry of a "frames" array.
func withoutVars(x any, frame bool) any {
	switch t := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			if frame && k == "vars" {
				continue
			}
			out[k] = withoutVars(v, k == "frames")
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = withoutVars(v, frame)
		}
		return out
	}
	return x
}

// TestFrameVarsOmittedAsByCopy: writing an interface with omitFrameVars
// omitted gives the value that writing a copy without the frames' vars
// gives (as the mapping did before the omission), at every depth limit,
// for captured events and for shapes no SDK sends.
func TestFrameVarsOmittedAsByCopy(t *testing.T) {
	inputs := map[string]any{}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("captured events: %d found, %v", len(files), err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := sentrysignal.DecodeAny(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, member := range []string{"exception", "threads"} {
			if x := doc.(map[string]any)[member]; x != nil {
				inputs[filepath.Base(f)+" "+member] = valuesForm(x)
			}
		}
	}
	shapes := map[string]string{
		"vars outside frames stay":  `{"values":[{"vars":{"a":1},"stacktrace":{"frames":[{"vars":{"x":1},"function":"f"}]}}]}`,
		"nested arrays of frames":   `{"frames":[[{"vars":1,"f":[{"vars":2}]}],{"vars":null,"frames":{"vars":3,"k":4}}]}`,
		"frames as an object":       `{"frames":{"vars":{"secret":1},"other":2}}`,
		"a frame holding frames":    `{"frames":[{"frames":[{"vars":"deep","a":[1,{"vars":0}]}],"vars":1}]}`,
		"not an object or an array": `"frames"`,
	}
	for name, s := range shapes {
		x, err := sentrysignal.DecodeAny([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = x
	}
	for name, x := range inputs {
		for depth := 0; depth <= 12; depth++ {
			want := pcommon.NewMap()
			sentrysignal.NewLimiter(sentrysignal.Options{}).PutAny(want, "v", withoutVars(x, false), depth)
			got := pcommon.NewMap()
			sentrysignal.NewLimiter(sentrysignal.Options{}).PutAnyOmitting(got, "v", x, depth, omitFrameVars)
			if !got.Equal(want) {
				t.Fatalf("%s, depth %d:\n got %v\nwant %v", name, depth, got.AsRaw(), want.AsRaw())
			}
		}
	}
}

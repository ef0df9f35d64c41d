package symbolicationprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap/hermestest"
)

// hermesJSProfile is the JS thread's profile as React Native's SDK sends it
// (`js_profile` of its Android chunk, which the receiver decodes as a
// `javascript` sample-format profile): each frame of the Hermes sampling
// profiler as the SDK converts it, one sample per frame, each frame a
// stack of its own; the bundle's debug id in a `sourcemap` image.
func hermesJSProfile(frames []hermestest.Frame, debugID string) []byte {
	var samples, stacks, js []string
	for i, f := range frames {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"27198","timestamp":%d.5}`, i, 1764000000+i))
		stacks = append(stacks, fmt.Sprintf(`[%d]`, i))
		js = append(js, fmt.Sprintf(`{"function":%q,"abs_path":%q,"lineno":%d,"colno":%d}`, f.Function, hermestest.BundleURL, f.Lineno, f.Colno))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"5f2dae120baa43679198f369c7df69c8","profiler_id":"79ba28b85eb542ce9d7f008d1c26a5f3",
"platform":"javascript","release":"com.shop@1.0+1","client_sdk":{"name":"sentry.javascript.react-native","version":"6.10.0"},
"profile":{"samples":[%s],"stacks":[%s],"frames":[%s],"thread_metadata":{"27198":{"name":"JavaScriptThread","priority":1}}},
"debug_meta":{"images":[{"type":"sourcemap","code_file":%q,"debug_id":%q}]}}`,
		strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(js, ","), hermestest.BundleURL, debugID)
}

// TestProcessorResolvesHermesProfile runs the Hermes test app with its
// sampling profiler (hermestest: a real Hermes runtime on a real release
// build) and resolves the profile's frames through the processor, against
// what node computes for them (Mozilla's source-map and metro-symbolicate).
func TestProcessorResolvesHermesProfile(t *testing.T) {
	app := hermestest.Build(t)
	frames := app.Run(t).Profile
	require.NotEmpty(t, frames, "the sampling profiler took no sample")
	want := app.Expect(t, frames)

	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{app.MapsDir}
	require.NoError(t, cfg.Validate())
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	out, err := s.processProfiles(context.Background(), toProfiles(t, hermesJSProfile(frames, app.DebugID)))
	require.NoError(t, err)

	got := framesByColumn(out)
	var names []string
	for i, f := range frames {
		sent := f.Function
		if sent == "" {
			sent = "<anonymous>" // the receiver names a nameless frame so
		}
		t.Run(fmt.Sprintf("%s@%d", f.Function, f.Colno), func(t *testing.T) {
			g, ok := got[int64(f.Colno)]
			require.True(t, ok, "no location of column %d", f.Colno)
			if want[i] == nil {
				// The bundle's prelude has no source: as it came.
				assert.Equal(t, resolvedFrame{Function: sent, File: hermestest.BundleURL, Line: 1, Column: int64(f.Colno), Generated: map[string]any{}}, g)
				return
			}
			assert.Equal(t, resolvedFrame{
				Function: want[i].Function, File: want[i].File, Line: int64(want[i].Line), Column: int64(want[i].Column),
				Generated: map[string]any{"function": sent, "file": hermestest.BundleURL, "line": int64(1), "column": int64(f.Colno)},
			}, g)
		})
		if want[i] != nil {
			names = append(names, want[i].Function)
		}
	}
	requireReadable(t, out, names...)
}

// framesByColumn is each location's first line keyed by the column it was
// sent with: every Hermes frame is on line 1, and Hermes names many
// functions alike ("o" twice, "" for every anonymous one).
func framesByColumn(pd pprofile.Profiles) map[int64]resolvedFrame {
	out := map[int64]resolvedFrame{}
	for _, f := range framesByLocation(pd) {
		col := f.Column
		if c, ok := f.Generated["column"].(int64); ok {
			col = c
		}
		out[col] = f
	}
	return out
}

// framesByLocation is every location's first line with the generated-frame
// attributes the processor added.
func framesByLocation(pd pprofile.Profiles) []resolvedFrame {
	d := pd.Dictionary()
	str := func(i int32) string { return d.StringTable().At(int(i)) }
	var out []resolvedFrame
	for i, loc := range d.LocationTable().All() {
		if i == 0 || loc.Lines().Len() == 0 {
			continue
		}
		l := loc.Lines().At(0)
		fn := d.FunctionTable().At(int(l.FunctionIndex()))
		f := resolvedFrame{Function: str(fn.NameStrindex()), File: str(fn.FilenameStrindex()), Line: l.Line(), Column: l.Column(), Generated: map[string]any{}}
		for _, ai := range loc.AttributeIndices().All() {
			a := d.AttributeTable().At(int(ai))
			if k := str(a.KeyStrindex()); strings.HasPrefix(k, "symbolication.generated.") {
				f.Generated[strings.TrimPrefix(k, "symbolication.generated.")] = a.Value().AsRaw()
			}
		}
		out = append(out, f)
	}
	return out
}

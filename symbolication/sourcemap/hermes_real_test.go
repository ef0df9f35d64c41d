package sourcemap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap/hermestest"
)

// TestHermesRealFrames builds the React Native shaped app (testdata/hermes:
// Babel, terser, hermesc -O, the maps composed, a debug id), runs its
// bytecode in the Hermes runtime, and resolves the frames of the error it
// throws (read out of the error event React Native's SDK sends, with the
// debug id of its `sourcemap` image) and of its sampling profile, against
// what node computes for them with Mozilla's source-map and
// metro-symbolicate's function maps.
func TestHermesRealFrames(t *testing.T) {
	app := hermestest.Build(t)
	run := app.Run(t)
	require.Equal(t, "RangeError", run.ErrorType)
	require.NotEmpty(t, run.Profile, "the sampling profiler took no sample")

	r, err := NewResolver(Options{Dirs: []string{app.MapsDir}, MaxCacheBytes: 64 << 20, RescanInterval: time.Minute})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	debugID, eventFrames := readErrorEvent(t, app.ErrorEvent(t, run))
	require.Equal(t, app.DebugID, debugID)
	for _, set := range []struct {
		name   string
		frames []hermestest.Frame
	}{{"error", eventFrames}, {"profile", run.Profile}} {
		want := app.Expect(t, set.frames)
		for i, f := range set.frames {
			t.Run(fmt.Sprintf("%s/%s@%d", set.name, f.Function, f.Colno), func(t *testing.T) {
				got, err := resolveHermes(r, debugID, f)
				if want[i] == nil {
					// The bundle's prelude (module system) has no source.
					assert.ErrorIs(t, err, symbolication.ErrNoMatch)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, []symbolication.Frame{{Function: want[i].Function, File: want[i].File, Line: want[i].Line, Column: want[i].Column}}, got)
			})
		}
	}

	// Without the debug id the map is found by the bundle's URL:
	// app:///index.android.bundle is <dir>/index.android.bundle.map.
	byPath, err := resolveHermes(r, "", eventFrames[0])
	require.NoError(t, err)
	byID, err := resolveHermes(r, debugID, eventFrames[0])
	require.NoError(t, err)
	assert.Equal(t, byID, byPath)

	// What the function maps are for: Hermes names the inlined priceOf, the
	// map callback and the runApp function terser turned into an IIFE
	// "anonymous", and Cart#total "value" (Babel's class lowering); the
	// error reads in original names, innermost first.
	var names []string
	for _, f := range run.Error {
		if got, err := resolveHermes(r, app.DebugID, f); err == nil {
			names = append(names, got[0].Function)
		}
	}
	assert.Equal(t, []string{"priceOf", "items.map$argument_0", "Cart#total", "checkout"}, names, "stack:\n%s", run.Stack)
}

func resolveHermes(r *Resolver, debugID string, f hermestest.Frame) ([]symbolication.Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.Resolve(ctx, symbolication.Lookup{
		DebugID: debugID,
		Frame:   symbolication.Frame{Function: f.Function, File: hermestest.BundleURL, Line: f.Lineno, Column: f.Colno},
	})
}

// TestHermesOffsetsAreZeroBased checks the column rule against the runtime:
// the app's bytecode and its minified bundle run from source (both -O, the
// same frames) print the same error, one as bytecode offsets, one as
// positions in the bundle. hermesc's own map must take each offset, as the
// SDK sends it (colno = offset + 1), to the position the source run
// printed: the offset Hermes prints is 0-based and names the instruction
// itself. (Taking offset − 1, as for a 1-based column, misses 4 of the 6.)
func TestHermesOffsetsAreZeroBased(t *testing.T) {
	app := hermestest.Build(t)
	bytecode := app.Run(t).Error
	source := app.RunSource(t)
	b, err := os.ReadFile(app.CompilerMap())
	require.NoError(t, err)
	m, err := Parse(b)
	require.NoError(t, err)
	require.True(t, m.IsHermes())
	// The source run prints native frames without a position, which the
	// bytecode frames leave out too.
	require.Len(t, source, len(bytecode), "bytecode frames %v, source frames %v", bytecode, source)
	for i, f := range bytecode {
		t.Run(fmt.Sprintf("%s@%d", f.Function, f.Colno), func(t *testing.T) {
			assert.Equal(t, source[i].Function, f.Function)
			tok, ok := m.frameOf(symbolication.Frame{Function: f.Function, Line: f.Lineno, Column: f.Colno})
			require.True(t, ok)
			assert.Equal(t, []int{source[i].Line, source[i].Column}, []int{tok.Line + 1, tok.Column + 1})
		})
	}
}

// readErrorEvent reads what a resolver needs of an error event: the debug
// id of its bundle's `sourcemap` image and the frames of its exception,
// innermost first.
func readErrorEvent(t *testing.T, event []byte) (string, []hermestest.Frame) {
	t.Helper()
	var ev struct {
		Exception struct {
			Values []struct {
				Stacktrace struct {
					Frames []struct {
						Function string `json:"function"`
						AbsPath  string `json:"abs_path"`
						Lineno   int    `json:"lineno"`
						Colno    int    `json:"colno"`
					}
				}
			}
		}
		DebugMeta struct {
			Images []struct {
				Type     string `json:"type"`
				CodeFile string `json:"code_file"`
				DebugID  string `json:"debug_id"`
			}
		} `json:"debug_meta"`
	}
	require.NoError(t, json.Unmarshal(event, &ev))
	require.Len(t, ev.Exception.Values, 1)
	require.Len(t, ev.DebugMeta.Images, 1)
	img := ev.DebugMeta.Images[0]
	require.Equal(t, []string{"sourcemap", hermestest.BundleURL}, []string{img.Type, img.CodeFile})
	sent := ev.Exception.Values[0].Stacktrace.Frames
	frames := make([]hermestest.Frame, len(sent))
	for i, f := range sent {
		require.Equal(t, hermestest.BundleURL, f.AbsPath)
		frames[len(sent)-1-i] = hermestest.Frame{Function: f.Function, Lineno: f.Lineno, Colno: f.Colno}
	}
	return img.DebugID, frames
}

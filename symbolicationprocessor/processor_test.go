package symbolicationprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadatatest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// The real esbuild build of the sourcemap package's tests: a minified
// bundle with a debug id injected by Sentry's esbuild plugin, its map, and
// the source it was built from.
const (
	mapsDir    = "../symbolication/sourcemap/testdata"
	testBundle = mapsDir + "/dist/app.min.js"
	testSource = mapsDir + "/src/app.js"
)

// jsBuild is what the tests know about the build, read from its files.
type jsBuild struct {
	bundle, source string
	debugID        string
}

func readBuild(t testing.TB) jsBuild {
	b, err := os.ReadFile(testBundle)
	require.NoError(t, err)
	s, err := os.ReadFile(testSource)
	require.NoError(t, err)
	id := regexp.MustCompile(`sentry-dbid-([0-9a-f-]{36})`).FindSubmatch(b)
	require.NotNil(t, id)
	return jsBuild{bundle: string(b), source: string(s), debugID: string(id[1])}
}

// v8 returns the 1-based line and column V8 gives the function starting at
// snippet (its parameter list), and the minified name before it.
func (b jsBuild) v8(t testing.TB, snippet string) (line, col int, name string) {
	for i, l := range strings.Split(b.bundle, "\n") {
		if c := strings.Index(l, snippet); c >= 0 {
			m := regexp.MustCompile(`([A-Za-z_$][\w$]*)=?$`).FindStringSubmatch(l[:c])
			if m != nil {
				name = m[1]
			}
			return i + 1, c + 1, name
		}
	}
	t.Fatalf("%q not in the bundle", snippet)
	return
}

// at returns the 1-based line and column of ident on the source line
// holding marker.
func (b jsBuild) at(t testing.TB, marker, ident string) (int, int) {
	for i, l := range strings.Split(b.source, "\n") {
		if c := strings.Index(l, marker); c >= 0 {
			return i + 1, c + strings.Index(l[c:], ident) + 1
		}
	}
	t.Fatalf("%q not in the source", marker)
	return 0, 0
}

// frameJSON is one Sentry node frame.
func frameJSON(function, absPath string, line, col int) string {
	return fmt.Sprintf(`{"function":%q,"abs_path":%q,"filename":%q,"lineno":%d,"colno":%d,"in_app":true}`,
		function, absPath, "app:///"+strings.TrimPrefix(absPath, "/"), line, col)
}

// nodeChunk is a V2 profile_chunk of @sentry/profiling-node with one
// sample per frame, each frame a stack of its own under (root).
func nodeChunk(frames []string, images string) []byte {
	var samples, stacks []string
	for i := range frames {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"0","timestamp":%d.5}`, i, 1764000000+i))
		stacks = append(stacks, fmt.Sprintf(`[%d,%d]`, i+1, 0))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",
"platform":"node","release":"app@1.0.0","client_sdk":{"name":"sentry.javascript.node","version":"11.1.0"},
"profile":{"samples":[%s],"stacks":[%s],"frames":[{"function":"(root)"},%s],"thread_metadata":{"0":{"name":"main"}}},
"debug_meta":{"images":[%s]}}`, strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","), images)
}

func toProfiles(t testing.TB, chunk []byte) pprofile.Profiles {
	p, err := sentry.DecodeProfile(chunk)
	require.NoError(t, err)
	return profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{})
}

// resolvedFrame is a location's first line as a reader of the output sees
// it, with the generated-frame attributes the processor added.
type resolvedFrame struct {
	Function, File string
	Line, Column   int64
	Generated      map[string]any
}

func framesByGenerated(pd pprofile.Profiles) map[string]resolvedFrame {
	d := pd.Dictionary()
	str := func(i int32) string { return d.StringTable().At(int(i)) }
	out := map[string]resolvedFrame{}
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
		key := f.Function
		if fn, ok := f.Generated["function"]; ok {
			key = fn.(string) + "@" + fmt.Sprint(f.Generated["line"])
		}
		out[key] = f
	}
	return out
}

func TestProcessorResolvesNodeChunk(t *testing.T) {
	b := readBuild(t)
	cpLine, cpCol, cpName := b.v8(t, "(t){let e=0;for(let r=2")
	_, ipCol, ipName := b.v8(t, "(t){for(let e=2;e*e")
	htLine, htCol, htName := b.v8(t, "t=>{let e=0;for(let r=0")
	const callerLine = 37 // a line of the caller, in another file
	frames := []string{
		frameJSON(cpName, "/srv/app/dist/app.min.js", cpLine, cpCol),
		frameJSON(ipName, "/srv/app/dist/app.min.js", callerLine, ipCol),
		// Found by the debug id of its image, not by its path.
		frameJSON(htName, "/opt/deployed/bundle.js", htLine, htCol),
		frameJSON("listOnTimeout", "node:internal/timers", 594, 17),
		frameJSON("q", "/srv/app/vendor.js", 1, 10),
		frameJSON("z", "/srv/app/broken.js", 1, 5),
	}
	broken := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(broken, "broken.js.map"), []byte(`{"version":3,"sources":["b.js"],"mappings":"!"}`), 0o644))
	images := fmt.Sprintf(`{"type":"sourcemap","code_file":"/opt/deployed/bundle.js","debug_id":%q}`, b.debugID)
	chunk := nodeChunk(frames, images)
	pd := toProfiles(t, chunk)

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.ProfilesSink)
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir, broken}
	require.NoError(t, cfg.Validate())
	p, err := NewFactory().CreateProfiles(context.Background(), metadatatest.NewSettings(tel), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeProfiles(context.Background(), pd))
	// The same frames again: answered by the resolved-frame cache.
	require.NoError(t, p.ConsumeProfiles(context.Background(), toProfiles(t, chunk)))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, sink.AllProfiles(), 2)
	assert.Equal(t, framesByGenerated(sink.AllProfiles()[0]), framesByGenerated(sink.AllProfiles()[1]))
	got := framesByGenerated(sink.AllProfiles()[0])
	requireReadable(t, sink.AllProfiles()[0], "computePrimes", "isPrime", "hashText")

	line, col := b.at(t, "function computePrimes", "computePrimes")
	ipSrcLine, ipSrcCol := b.at(t, "function isPrime", "isPrime")
	htSrcLine, htSrcCol := b.at(t, "const hashText", "hashText")
	tests := []struct {
		key  string
		want resolvedFrame
	}{
		{key: fmt.Sprintf("%s@%d", cpName, cpLine), want: resolvedFrame{Function: "computePrimes", File: "src/app.js", Line: int64(line), Column: int64(col),
			Generated: map[string]any{"function": cpName, "file": "/srv/app/dist/app.min.js", "line": int64(cpLine), "column": int64(cpCol)}}},
		{key: fmt.Sprintf("%s@%d", ipName, callerLine), want: resolvedFrame{Function: "isPrime", File: "src/app.js", Line: int64(ipSrcLine), Column: int64(ipSrcCol),
			Generated: map[string]any{"function": ipName, "file": "/srv/app/dist/app.min.js", "line": int64(callerLine), "column": int64(ipCol)}}},
		{key: fmt.Sprintf("%s@%d", htName, htLine), want: resolvedFrame{Function: "hashText", File: "src/app.js", Line: int64(htSrcLine), Column: int64(htSrcCol),
			Generated: map[string]any{"function": htName, "file": "/opt/deployed/bundle.js", "line": int64(htLine), "column": int64(htCol)}}},
		// Not a bundle: untouched and not counted.
		{key: "listOnTimeout", want: resolvedFrame{Function: "listOnTimeout", File: "node:internal/timers", Line: 594, Column: 17, Generated: map[string]any{}}},
		// No map: stays as it came, counted unresolved.
		{key: "q", want: resolvedFrame{Function: "q", File: "/srv/app/vendor.js", Line: 1, Column: 10, Generated: map[string]any{}}},
		// A broken map: stays as it came, counted as a load error.
		{key: "z", want: resolvedFrame{Function: "z", File: "/srv/app/broken.js", Line: 1, Column: 5, Generated: map[string]any{}}},
		{key: "(root)", want: resolvedFrame{Function: "(root)", Generated: map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			assert.Equal(t, tt.want, got[tt.key])
		})
	}
	assert.Len(t, got, len(tests))

	kind := attribute.String("kind", "sourcemap")
	metadatatest.AssertEqualProcessorSymbolicationFramesResolved(t, tel, []metricdata.DataPoint[int64]{
		{Value: 6, Attributes: attribute.NewSet(kind)},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationFramesUnresolved(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(kind, attribute.String("reason", "no_artifact"))},
		{Value: 2, Attributes: attribute.NewSet(kind, attribute.String("reason", "load_error"))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationArtifactLoadErrors(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(kind)},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorSymbolicationFrameCacheHits(t, tel, []metricdata.DataPoint[int64]{
		{Value: 5, Attributes: attribute.NewSet(kind)},
	}, metricdatatest.IgnoreTimestamp())
}

// TestProcessorLeavesResolvedAlone: a second pass (two processors in a
// pipeline, or a profile symbolicated upstream) changes nothing.
func TestProcessorLeavesResolvedAlone(t *testing.T) {
	b := readBuild(t)
	line, col, name := b.v8(t, "(t){for(let e=2;e*e")
	pd := toProfiles(t, nodeChunk([]string{frameJSON(name, "/srv/app/dist/app.min.js", line, col)}, ""))
	cfg := testConfig()
	cfg.SourceMaps.Directories = []string{mapsDir}
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	once, err := s.processProfiles(context.Background(), pd)
	require.NoError(t, err)
	first := pprofile.NewProfiles()
	once.CopyTo(first)
	twice, err := s.processProfiles(context.Background(), once)
	require.NoError(t, err)
	assert.Equal(t, framesByGenerated(first), framesByGenerated(twice))
	assert.Equal(t, first.Dictionary().LocationTable().Len(), twice.Dictionary().LocationTable().Len())
	assert.Equal(t, "isPrime", framesByGenerated(twice)[fmt.Sprintf("%s@%d", name, line)].Function)
}

func TestStartFailsOnMissingDirectories(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{name: "source maps", mutate: func(c *Config) { c.SourceMaps.Directories = []string{missing} }, wantErr: "source map directory"},
		{name: "proguard", mutate: func(c *Config) { c.ProGuard.Directories = []string{missing} }, wantErr: "proguard directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.mutate(cfg)
			require.NoError(t, cfg.Validate())
			p, err := NewFactory().CreateProfiles(context.Background(), metadatatest.NewSettings(componenttest.NewTelemetry()), cfg, new(consumertest.ProfilesSink))
			require.NoError(t, err, "creating does not touch the directories (validate creates components)")
			err = p.Start(context.Background(), componenttest.NewNopHost())
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, missing)
			require.NoError(t, p.Shutdown(context.Background()))
		})
	}
}

// testConfig is the default configuration with a batch wait long enough
// for a frame to resolve in its first batch however loaded the machine
// (under the race detector, with every package's tests running, parsing a
// map and its bundle's scopes can take longer than the default second):
// the tests that use it are about what a resolved frame looks like, not
// about the wait, which hostile_test.go and the complexity guard measure.
func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxBatchWait = time.Minute
	return cfg
}

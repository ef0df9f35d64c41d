package complexityguard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// symbolicate is one run of the symbolication processor built by its
// factory: a fresh processor each time, so that neither its artifact
// cache nor its resolved-frame cache answers what an earlier run looked
// up, and every run does the whole work.
func symbolicate(tb testing.TB, cfg *symbolicationprocessor.Config, chunk []byte) func() (pprofile.Profiles, int64) {
	p, err := sentry.DecodeProfile(chunk)
	require.NoError(tb, err)
	input := profilestest.ToProfiles([]translator.DecodedProfile{{Profile: p}}, translator.ReceiveOptions{})
	f := symbolicationprocessor.NewFactory()
	require.NoError(tb, cfg.Validate())
	return func() (pprofile.Profiles, int64) {
		pd := pprofile.NewProfiles()
		input.CopyTo(pd)
		sink := new(consumertest.ProfilesSink)
		ctx := context.Background()
		proc, err := f.CreateProfiles(ctx, processortest.NewNopSettings(f.Type()), cfg, sink)
		require.NoError(tb, err)
		require.NoError(tb, proc.Start(ctx, componenttest.NewNopHost()))
		if err := proc.ConsumeProfiles(ctx, pd); err != nil {
			tb.Errorf("symbolication: %v", err)
		}
		require.NoError(tb, proc.Shutdown(ctx))
		var size int64
		for _, out := range sink.AllProfiles() {
			size += int64((&pprofile.ProtoMarshaler{}).ProfilesSize(out))
		}
		return pprofile.Profiles{}, size
	}
}

// nodeChunk is a V2 chunk of @sentry/profiling-node with one sample per
// frame, each frame a stack of its own under (root).
func nodeChunk(frames []string) []byte {
	var samples, stacks []string
	for i := range frames {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"0","timestamp":%d.5}`, i, 1795000000+i%60))
		stacks = append(stacks, fmt.Sprintf(`[%d,0]`, i+1))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",`+
		`"platform":"node","release":"app@1.0.0","client_sdk":{"name":"sentry.javascript.node","version":"11.1.0"},`+
		`"profile":{"samples":[%s],"stacks":[%s],"frames":[{"function":"(root)"},%s],"thread_metadata":{"0":{"name":"main"}}}}`,
		strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","))
}

func jsFrame(function, absPath string, line, col int) string {
	return fmt.Sprintf(`{"function":%q,"abs_path":%q,"lineno":%d,"colno":%d,"in_app":true}`, function, absPath, line, col)
}

// symbolicationRow runs the processor over the chunk chunk(n) with the
// configuration config(dir), dir a fresh directory setup(dir, n) fills.
func symbolicationRow(setup func(tb testing.TB, dir string, n int), config func(dir string) *symbolicationprocessor.Config,
	chunk func(n int) []byte,
) func(testing.TB, int) sized {
	return func(tb testing.TB, n int) sized {
		dir := tb.TempDir()
		if setup != nil {
			setup(tb, dir, n)
		}
		data := chunk(n)
		run := symbolicate(tb, config(dir), data)
		var out int64
		return sized{
			run:     func() { _, out = run() },
			observe: func() outcome { return outcome{input: int64(len(data)), output: out} },
		}
	}
}

func sourceMapsIn(dir string) *symbolicationprocessor.Config {
	cfg := symbolicationprocessor.NewFactory().CreateDefaultConfig().(*symbolicationprocessor.Config)
	cfg.SourceMaps.Directories = []string{dir}
	return cfg
}

// unminifiedMap is the source map of a bundle of lines lines, one mapping
// at the start of each: what a development build or a transpiler that
// keeps the lines writes, and the densest in lines per byte.
func unminifiedMap(lines int) []byte {
	var b strings.Builder
	b.WriteString(`{"version":3,"sources":["src/app.js"],"names":[],"mappings":"AAAA`)
	for range lines - 1 {
		b.WriteString(";AACA")
	}
	b.WriteString(`"}`)
	return []byte(b.String())
}

// debuginfodStandIn answers 404 to every build id after delay, and counts
// the requests it gets.
type debuginfodStandIn struct {
	srv      *httptest.Server
	requests atomic.Int64
}

func newDebuginfod(tb testing.TB, delay time.Duration) *debuginfodStandIn {
	d := &debuginfodStandIn{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.requests.Add(1)
		time.Sleep(delay)
		http.NotFound(w, r)
	}))
	tb.Cleanup(d.srv.Close)
	return d
}

// nativeChunk is a V2 chunk of sentry-native with one frame in each of n
// images, each image naming a build id no file has.
func nativeChunk(n int) []byte {
	var samples, stacks, frames, images []string
	for i := range n {
		base := uint64(0x5555_0000_0000) + uint64(i)<<24
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"1","timestamp":1795000000.%03d}`, i, i%1000))
		stacks = append(stacks, fmt.Sprintf(`[%d]`, i))
		frames = append(frames, fmt.Sprintf(`{"instruction_addr":"%#x"}`, base+0x1040))
		images = append(images, fmt.Sprintf(`{"type":"elf","code_file":"/usr/lib/lib%d.so","code_id":"%040x","image_addr":"%#x","image_size":1048576}`, i, i+1, base))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",`+
		`"platform":"native","release":"spin@1.0.0","client_sdk":{"name":"sentry.native","version":"0.7.0"},`+
		`"profile":{"samples":[%s],"stacks":[%s],"frames":[%s],"thread_metadata":{"1":{"name":"main"}}},"debug_meta":{"images":[%s]}}`,
		strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","), strings.Join(images, ","))
}

// proguardMapping is an R8 mapping of n classes of one method each.
func proguardMapping(n int) []byte {
	var b strings.Builder
	b.WriteString("# compiler: R8\n")
	for i := range n {
		fmt.Fprintf(&b, "com.example.shop.Class%d -> a%d:\n    1:3:int total%d():10:12 -> a\n", i, i, i)
	}
	return []byte(b.String())
}

const proguardUUID = "7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f"

func androidChunk(n int) []byte {
	var samples, stacks, frames []string
	for i := range n {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"1","timestamp":1795000000.%03d}`, i, i%1000))
		stacks = append(stacks, fmt.Sprintf(`[%d]`, i))
		frames = append(frames, fmt.Sprintf(`{"function":"a","module":"a%d","lineno":2,"in_app":true}`, i))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",`+
		`"platform":"android","release":"shop@1.0.0","client_sdk":{"name":"sentry.java.android","version":"8.0.0"},`+
		`"profile":{"samples":[%s],"stacks":[%s],"frames":[%s],"thread_metadata":{"1":{"name":"main"}}},"debug_meta":{"images":[{"type":"proguard","uuid":%q}]}}`,
		strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","), proguardUUID)
}

// maxDebuginfodRequests is the most debuginfod requests the guard lets one
// batch make, whatever build ids it names: each may wait for the server's
// timeout, so an unbounded number per batch lets 4 KiB of invented ids
// hold the pipeline for minutes.
const maxDebuginfodRequests = 32

func symbolicationRows() []row {
	return []row{
		{
			name: "sourcemap_path_components", dimension: "components of a frame's path", n: 500, maxN: 8000, clock: ProcessClock,
			fuzz:   []string{"symbolicationprocessor.FuzzProcessProfiles", "symbolication/sources.FuzzSourceMappingURL", "symbolication/sources.FuzzLocate"},
			defect: "#3: the source-map locator tries every suffix of the path, each rebuilt whole (64,000 components: 7.5 s)",
			build: symbolicationRow(func(tb testing.TB, dir string, _ int) {
				require.NoError(tb, os.WriteFile(filepath.Join(dir, "app.js.map"), unminifiedMap(10), 0o644))
			}, sourceMapsIn, func(n int) []byte {
				return nodeChunk([]string{jsFrame("f", "/"+strings.Repeat("a/", n)+"app.js", 1, 1)})
			}),
		},
		{
			name: "sourcemap_frames_per_map", dimension: "distinct frames × lines of the map", n: 200, clock: ProcessClock,
			fuzz:   []string{"symbolication/sourcemap.FuzzParse", "symbolication/sourcemap.FuzzFunctionAtColumn"},
			defect: "#6: each frame walks the map's lines from the start (4,000 frames against 300,000 lines: 5.7 s)",
			build: symbolicationRow(func(tb testing.TB, dir string, n int) {
				require.NoError(tb, os.WriteFile(filepath.Join(dir, "big.js.map"), unminifiedMap(40*n), 0o644))
			}, sourceMapsIn, func(n int) []byte {
				frames := make([]string, n)
				for i := range frames {
					// Spread over the map, the last frames near its end.
					frames[i] = jsFrame(fmt.Sprintf("f%d", i), "/srv/app/big.js", 40*i+39, 1)
				}
				return nodeChunk(frames)
			}),
		},
		{
			name: "proguard_classes", dimension: "classes of the mapping and frames naming them", n: 500, clock: ProcessClock,
			fuzz: []string{"symbolication/proguard.FuzzParse"},
			build: symbolicationRow(func(tb testing.TB, dir string, n int) {
				require.NoError(tb, os.WriteFile(filepath.Join(dir, proguardUUID+".txt"), proguardMapping(n), 0o644))
			}, func(dir string) *symbolicationprocessor.Config {
				cfg := symbolicationprocessor.NewFactory().CreateDefaultConfig().(*symbolicationprocessor.Config)
				cfg.ProGuard.Directories = []string{dir}
				return cfg
			}, androidChunk),
		},
		nativeBuildIDsRow(),
	}
}

// nativeBuildIDsRow: n invented build ids in one batch, with a debuginfod
// stand-in that knows none of them. The work counted is the requests it
// gets.
func nativeBuildIDsRow() row {
	return row{
		name: "native_build_ids_per_batch", dimension: "invented build ids in one batch", n: 40,
		fuzz:    []string{"symbolication/native.FuzzLoadImage"},
		defect:  "#5: every unknown build id of a batch is one more sequential debuginfod request (40 ids in a 4 KiB envelope: 40 requests)",
		maxWork: func(int) int64 { return maxDebuginfodRequests },
		build: func(tb testing.TB, n int) sized {
			d := newDebuginfod(tb, time.Millisecond)
			cache := tb.TempDir()
			cfg := symbolicationprocessor.NewFactory().CreateDefaultConfig().(*symbolicationprocessor.Config)
			cfg.Native.DebuginfodURLs = []string{d.srv.URL}
			cfg.Native.CacheDirectory = cache
			data := nativeChunk(n)
			run := symbolicate(tb, cfg, data)
			var out, before, after int64
			return sized{
				run: func() {
					before = d.requests.Load()
					_, out = run()
					after = d.requests.Load()
				},
				observe: func() outcome { return outcome{input: int64(len(data)), output: out, work: after - before} },
			}
		},
	}
}

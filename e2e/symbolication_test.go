package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// The symbolication e2e test: production builds made here (esbuild,
// minified, source maps, debug ids injected by Sentry's esbuild plugin),
// profiled by the real Sentry SDKs, through the sentryprofile receiver and
// the symbolication processor into the file exporter. The hottest frames
// must come out with the names, file and lines of the source the test
// wrote.

const symbolicationDir = "symbolication"

// symbolicationWorkload is the application code both builds share. Its
// functions are what the profiles must name after symbolication; each is
// declared on a line of its own so the test can find its line.
const symbolicationWorkload = `// Application code of the symbolication e2e test.
export function mandelbrotEscape(cx, cy) {
  let x = 0, y = 0, i = 0;
  while (x * x + y * y < 4 && i < 400) {
    const t = x * x - y * y + cx;
    y = 2 * x * y + cy;
    x = t;
    i++;
  }
  return i;
}

export function renderFractalRow(row, width) {
  let sum = 0;
  for (let col = 0; col < width; col++) {
    sum += mandelbrotEscape((col / width) * 3 - 2, (row / width) * 3 - 1.5);
  }
  return sum;
}

export function checksumRecords(count, seed) {
  let h = seed;
  for (let r = 0; r < count; r++) {
    const record = 'record-' + seed + '-' + r;
    for (let i = 0; i < record.length; i++) h = (Math.imul(h, 33) + record.charCodeAt(i)) | 0;
  }
  return h;
}

export function runWorkload(busyMillis, now) {
  const end = now() + busyMillis;
  let rounds = 0, acc = 0;
  while (now() < end) {
    acc = (acc + renderFractalRow(rounds % 160, 160)) | 0;
    acc = (acc + checksumRecords(300, rounds)) | 0;
    rounds++;
  }
  return { rounds, acc };
}
`

// symbolicationWorkloadFunctions are the functions of the workload.
var symbolicationWorkloadFunctions = []string{"mandelbrotEscape", "renderFractalRow", "checksumRecords", "runWorkload"}

const symbolicationBrowserMain = `import * as Sentry from '@sentry/browser';
import { runWorkload } from './workload.js';

async function main() {
  const q = new URLSearchParams(window.location.search);
  Sentry.init({
    dsn: q.get('dsn'),
    release: 'symbolication-e2e@1.0.0',
    integrations: [Sentry.browserProfilingIntegration()],
    tracesSampleRate: 1,
    profileSessionSampleRate: 1,
    profileLifecycle: 'trace',
  });
  const result = Sentry.startSpan({ name: 'workload' }, () => runWorkload(Number(q.get('busy')), () => performance.now()));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const flushed = await Sentry.flush(10000);
  await fetch('/done', { method: 'POST', body: JSON.stringify({ rounds: result.rounds, flushed }) });
}
main().catch((err) => fetch('/done', { method: 'POST', body: JSON.stringify({ error: String(err && err.stack ? err.stack : err) }) }));
`

const symbolicationNodeMain = `import * as Sentry from '@sentry/node';
import { nodeProfilingIntegration } from '@sentry/profiling-node';
import { runWorkload } from './workload.js';

Sentry.init({
  dsn: process.env.SENTRY_DSN,
  release: 'symbolication-e2e@1.0.0',
  integrations: [nodeProfilingIntegration()],
  tracesSampleRate: 1,
  traceLifecycle: 'static',
  profileSessionSampleRate: 1,
  profileLifecycle: 'trace',
});
const result = Sentry.startSpan({ name: 'workload' }, () => runWorkload(Number(process.env.E2E_BUSY_MS), () => Date.now()));
Sentry.flush(10000).then((flushed) => {
  console.log(JSON.stringify({ rounds: result.rounds, flushed }));
  if (!flushed) process.exitCode = 1;
});
`

// symbolicationBuild is one production build made by the test.
type symbolicationBuild struct {
	work     string // the temporary directory of sources, build and output
	dist     string // the build's directory: what the processor is pointed at
	bundle   string // the bundle's path
	source   string // the workload source as written
	receiver string // the collector's receiver address
	output   string // the file exporter's output
}

func TestSymbolicationRealBuilds(t *testing.T) {
	requireE2E(t)
	bin := requireBinary(t)
	requireNodeModules(t, symbolicationDir)
	tests := []struct {
		name       string
		main       string
		bundleName string
		run        func(t *testing.T, b symbolicationBuild)
	}{
		{name: "browser", main: symbolicationBrowserMain, bundleName: "app.min.js", run: runSymbolicationPage},
		{name: "node", main: symbolicationNodeMain, bundleName: "app.js", run: runSymbolicationNode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := buildForSymbolication(t, tt.name, tt.main, tt.bundleName)
			startSymbolicationCollector(t, bin, b)
			tt.run(t, b)
			pds := waitForProfiles(t, b.output)
			checkHottestFramesResolved(t, b, pds)
		})
	}
}

// buildForSymbolication writes the sources and builds them with
// symbolication/build.mjs.
func buildForSymbolication(t *testing.T, platform, main, bundleName string) symbolicationBuild {
	work := t.TempDir()
	b := symbolicationBuild{work: work, dist: filepath.Join(work, "dist"), source: symbolicationWorkload,
		output: filepath.Join(work, "profiles.jsonl"), receiver: testnet.FreeLoopbackAddr(t)}
	b.bundle = filepath.Join(b.dist, bundleName)
	src := filepath.Join(work, "src")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "workload.js"), []byte(symbolicationWorkload), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.js"), []byte(main), 0o644))
	cmd := exec.Command("node", "build.mjs", filepath.Join(src, "main.js"), b.bundle, platform)
	cmd.Dir = symbolicationDir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "build.mjs:\n%s", out)
	bundle, err := os.ReadFile(b.bundle)
	require.NoError(t, err)
	require.Regexp(t, `sentry-dbid-[0-9a-f-]{36}`, string(bundle), "Sentry's esbuild plugin injected no debug id")
	for _, fn := range symbolicationWorkloadFunctions {
		require.NotContains(t, string(bundle), "function "+fn, "the build is not minified")
	}
	return b
}

func startSymbolicationCollector(t *testing.T, bin string, b symbolicationBuild) {
	config := fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %q
    cors:
      allowed_origins: ["http://127.0.0.1:*"]
processors:
  symbolication:
    source_maps:
      directories: [%q]
exporters:
  file:
    path: %q
    format: json
    flush_interval: 100ms
service:
  telemetry:
    logs:
      level: debug
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      processors: [symbolication]
      exporters: [file]
`, b.receiver, b.dist, b.output)
	path := filepath.Join(b.work, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	p := startCollector(t, bin, nil, "--config", path, profilesGate)
	p.waitListening(t, b.receiver)
}

func symbolicationDSN(b symbolicationBuild) string {
	return "http://e2ekey@" + b.receiver + "/1"
}

func runSymbolicationNode(t *testing.T, b symbolicationBuild) {
	modules, err := filepath.Abs(filepath.Join(symbolicationDir, "node_modules"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", b.bundle)
	cmd.Dir = b.work
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SENTRY_DSN="+symbolicationDSN(b), "E2E_BUSY_MS=3000")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node %s:\n%s", b.bundle, out)
	t.Logf("node %s: %s", filepath.Base(b.bundle), out)
}

// symbolicationBundleURL is where the page loads the bundle from: a path
// unlike the build's layout, so that only the debug id the SDK reports can
// find its map.
const symbolicationBundleURL = "/static/js/main.3f9a2c.js"

// runSymbolicationPage serves the browser build and opens it in headless
// Chromium, as browserPage does for the SDK tests.
func runSymbolicationPage(t *testing.T, b symbolicationBuild) {
	query := url.Values{"dsn": {symbolicationDSN(b)}, "busy": {strconv.Itoa(3000)}}
	openPage(t, b.bundle, symbolicationBundleURL, query, filepath.Join(b.work, "chromium"), func(pageResult, func() string) {})
}

// waitForProfiles waits until the file exporter has written samples and
// then nothing new for a second.
func waitForProfiles(t *testing.T, output string) []pprofile.Profiles {
	deadline := time.Now().Add(60 * time.Second)
	seen, quietSince := -1, time.Now()
	for time.Now().Before(deadline) {
		pds, err := readJSONLines(output)
		require.NoError(t, err)
		if n := summarize(pds...).SampleEvents; n != seen {
			seen, quietSince = n, time.Now()
		}
		if seen > 0 && time.Since(quietSince) >= time.Second {
			return pds
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no profile samples in %s within 60s", output)
	return nil
}

// outFrame is a frame of the output, with the samples it was on.
type outFrame struct {
	Function, File    string
	Line, Column      int64
	GeneratedFunction string // the minified name, when the processor resolved it
	GeneratedFile     string // the bundle, when the processor resolved it
	Self, Total       int    // samples with the frame as leaf, and on the stack
}

// outFrames gathers the frames of every sampled stack, summed over the
// profiles by what they show.
func outFrames(pds []pprofile.Profiles) []*outFrame {
	byKey := map[outFrame]*outFrame{}
	for _, pd := range pds {
		d := pd.Dictionary()
		str := func(i int32) string { return d.StringTable().At(int(i)) }
		frameOf := func(li int32) *outFrame {
			loc := d.LocationTable().At(int(li))
			var f outFrame
			if loc.Lines().Len() > 0 {
				l := loc.Lines().At(0)
				fn := d.FunctionTable().At(int(l.FunctionIndex()))
				f.Function, f.File, f.Line, f.Column = str(fn.NameStrindex()), str(fn.FilenameStrindex()), l.Line(), l.Column()
			}
			for _, ai := range loc.AttributeIndices().All() {
				a := d.AttributeTable().At(int(ai))
				switch str(a.KeyStrindex()) {
				case "symbolication.generated.function":
					f.GeneratedFunction = a.Value().Str()
				case "symbolication.generated.file":
					f.GeneratedFile = a.Value().Str()
				}
			}
			if byKey[f] == nil {
				byKey[f] = &f
			}
			return byKey[f]
		}
		for _, rp := range pd.ResourceProfiles().All() {
			for _, sp := range rp.ScopeProfiles().All() {
				for _, p := range sp.Profiles().All() {
					for _, s := range p.Samples().All() {
						n := sampleEvents(s)
						stack := d.StackTable().At(int(s.StackIndex())).LocationIndices()
						onStack := map[*outFrame]bool{}
						for i, li := range stack.All() {
							f := frameOf(li)
							if i == 0 {
								f.Self += n
							}
							if !onStack[f] {
								onStack[f] = true
								f.Total += n
							}
						}
					}
				}
			}
		}
	}
	out := make([]*outFrame, 0, len(byKey))
	for _, f := range byKey {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Self > out[j].Self })
	return out
}

// checkHottestFramesResolved: the frames of the bundle that were hottest
// (by samples as leaf) are resolved to the workload's functions, with the
// file and the line the test wrote them at, and every workload function
// the profiles saw is resolved so.
func checkHottestFramesResolved(t *testing.T, b symbolicationBuild, pds []pprofile.Profiles) {
	declLine := map[string]int64{}
	for i, l := range strings.Split(b.source, "\n") {
		if m := regexp.MustCompile(`^export function (\w+)\(`).FindStringSubmatch(l); m != nil {
			declLine[m[1]] = int64(i + 1)
		}
	}
	require.Len(t, declLine, len(symbolicationWorkloadFunctions))
	bundleName := filepath.Base(b.bundle)
	if strings.HasSuffix(bundleName, ".min.js") {
		bundleName = filepath.Base(symbolicationBundleURL)
	}
	var bundleFrames []*outFrame
	for _, f := range outFrames(pds) {
		if strings.HasSuffix(f.GeneratedFile, bundleName) || strings.HasSuffix(f.File, bundleName) {
			bundleFrames = append(bundleFrames, f)
		}
	}
	require.NotEmpty(t, bundleFrames, "no frame of the bundle %s in the output", bundleName)
	for i, f := range bundleFrames {
		if i < 5 {
			t.Logf("hottest bundle frame %d: %+v", i+1, *f)
		}
	}
	// The hot frames: those with a tenth of the bundle's samples as leaf or
	// more. The script's own top-level frame (no name, at 1:1, the start of
	// the bundle, where no function of the source is) is not a function,
	// and stays as it came.
	selfTotal := 0
	for _, f := range bundleFrames {
		selfTotal += f.Self
	}
	hot := 0
	for _, f := range bundleFrames {
		if f.Self*10 < selfTotal || (f.Line == 1 && f.Column == 1 && f.GeneratedFunction == "") {
			continue
		}
		hot++
		assert.Contains(t, declLine, f.Function, "hot frame %+v is not a workload function", *f)
		assert.NotEmpty(t, f.GeneratedFunction, "hot frame %+v was not resolved", *f)
	}
	assert.Positive(t, hot, "no hot function frame in the bundle")
	seen := map[string]bool{}
	for _, f := range bundleFrames {
		line, ok := declLine[f.Function]
		if !ok {
			continue
		}
		seen[f.Function] = true
		assert.True(t, strings.HasSuffix(f.File, "src/workload.js"), "%s resolved to file %q", f.Function, f.File)
		assert.Equal(t, line, f.Line, "%s resolved to line %d, declared on %d", f.Function, f.Line, line)
		assert.NotEqual(t, f.Function, f.GeneratedFunction, "%s kept its name through minification", f.Function)
	}
	// mandelbrotEscape may be inlined into renderFractalRow by V8, and
	// then only one of the two is sampled.
	for _, fn := range []string{"runWorkload", "checksumRecords"} {
		assert.True(t, seen[fn], "%s is not among the resolved frames", fn)
	}
	assert.True(t, seen["renderFractalRow"] || seen["mandelbrotEscape"], "neither fractal function is among the resolved frames")
}

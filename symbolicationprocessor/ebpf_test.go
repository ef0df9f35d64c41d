package symbolicationprocessor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// ebpfFixture is the OpenTelemetry eBPF profiler's output through a
// collector on a machine like this one (see ../shared/fixtures/otlp):
// address-only frames in ELF file address space, mappings with GNU build
// ids.
const ebpfFixture = "ebpf-profiler-b442421__python-node-go-load.otlp.jsonl"

// localBinaries are binaries of this machine that the fixture's processes
// ran; the test uses those whose build id still matches.
var localBinaries = []string{"/usr/bin/python3.11", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/node", "/bin/bash"}

// nativeAnswer is one address-only frame of the fixture and what the
// processor made of it.
type nativeAnswer struct {
	bin      string
	addr     uint64
	function string // "" when unresolved
}

// TestProcessorResolvesEBPFProfilerOutput resolves the eBPF profiler's
// native frames with this machine's binaries (stripped: their dynamic
// symbol tables), laid out as a .build-id directory of links. Every answer
// must lie in the symbol it names, by nm's addresses and sizes; node, which
// exports its symbols, must resolve entirely.
func TestProcessorResolvesEBPFProfilerOutput(t *testing.T) {
	lines := fixtures.OTLPLines(t, ebpfFixture)
	for _, tool := range []string{"readelf", "nm"} {
		testenv.LookPath(t, tool, "binutils")
	}
	dir := t.TempDir()
	ids := linkBuildIDs(t, dir, localBinaries)
	if len(ids) == 0 {
		t.Skip("none of the local binaries is there to link")
	}
	cfg := createDefaultConfig().(*Config)
	cfg.Native.Directories = []string{dir}
	// Every frame is checked: each batch waits for node's 99 MB to load
	// (past the default wait, the first batches would pass it pending).
	cfg.MaxBatchWait = 2 * time.Minute
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })

	var answers []nativeAnswer
	var um pprofile.JSONUnmarshaler
	for _, line := range lines {
		pd, err := um.UnmarshalProfiles(line)
		require.NoError(t, err)
		before := addressOnly(pd, ids)
		out, err := s.processProfiles(context.Background(), pd)
		require.NoError(t, err)
		d := out.Dictionary()
		for li, a := range before {
			loc := d.LocationTable().At(li)
			if n := loc.Lines().Len(); n > 0 {
				fn := d.FunctionTable().At(int(loc.Lines().At(n - 1).FunctionIndex()))
				a.function = d.StringTable().At(int(fn.NameStrindex()))
			}
			answers = append(answers, a)
		}
	}
	if len(answers) == 0 {
		t.Skip("none of this machine's binaries has a build id of the fixture's")
	}
	checkAgainstNM(t, answers)
}

// linkBuildIDs links each binary as dir/.build-id/xx/rest and returns build
// id → binary.
func linkBuildIDs(t *testing.T, dir string, bins []string) map[string]string {
	ids := map[string]string{}
	for _, bin := range bins {
		out, err := exec.Command("readelf", "-n", bin).Output()
		if err != nil {
			continue
		}
		if m := regexp.MustCompile(`Build ID: ([0-9a-f]{4,})`).FindSubmatch(out); m != nil {
			id := string(m[1])
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".build-id", id[:2]), 0o755))
			require.NoError(t, os.Symlink(bin, filepath.Join(dir, ".build-id", id[:2], id[2:])))
			ids[id] = bin
		}
	}
	return ids
}

// addressOnly returns the locations that have an address and no lines, in
// a mapping whose build id is one of ids.
func addressOnly(pd pprofile.Profiles, ids map[string]string) map[int]nativeAnswer {
	d := newDictionary(pd.Dictionary())
	out := map[int]nativeAnswer{}
	for i, loc := range d.d.LocationTable().All() {
		if t := nativeTargets(nil, d, loc, false); len(t) > 0 && ids[t[0].in.BuildID] != "" {
			out[i] = nativeAnswer{bin: ids[t[0].in.BuildID], addr: loc.Address()}
		}
	}
	return out
}

// checkAgainstNM checks each answer against the binary's dynamic symbols
// (nm -D -S: address and size), by symbol name as nm prints it unmangled.
func checkAgainstNM(t *testing.T, answers []nativeAnswer) {
	type span struct{ lo, hi uint64 }
	symbols := map[string]map[string][]span{}
	perBin := map[string][2]int{}
	for _, a := range answers {
		if symbols[a.bin] == nil {
			out, err := exec.Command("nm", "-D", "-S", "--defined-only", a.bin).Output()
			require.NoError(t, err)
			symbols[a.bin] = map[string][]span{}
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Fields(l)
				if len(f) != 4 {
					continue
				}
				lo, err1 := strconv.ParseUint(f[0], 16, 64)
				size, err2 := strconv.ParseUint(f[1], 16, 64)
				if err1 == nil && err2 == nil {
					name, _, _ := strings.Cut(f[3], "@")
					symbols[a.bin][name] = append(symbols[a.bin][name], span{lo, lo + size})
				}
			}
		}
		c := perBin[a.bin]
		c[1]++
		if a.function != "" {
			c[0]++
			spans, ok := symbols[a.bin][a.function]
			// C++ names come demangled, nm's are not: only C binaries'
			// names are looked up.
			if !strings.Contains(a.function, "::") {
				assert.True(t, ok, "%s %#x resolved to %s, which nm does not list", a.bin, a.addr, a.function)
			}
			if ok {
				inside := false
				for _, s := range spans {
					inside = inside || (a.addr >= s.lo && a.addr < s.hi)
				}
				assert.True(t, inside, "%s %#x resolved to %s, which nm places elsewhere", a.bin, a.addr, a.function)
			}
		}
		perBin[a.bin] = c
	}
	for bin, c := range perBin {
		t.Logf("%s: %d of %d address-only frames resolved", bin, c[0], c[1])
	}
	if c, ok := perBin["/usr/bin/node"]; ok {
		assert.Equal(t, c[1], c[0], "node exports its symbols: every frame in it resolves")
	}
}

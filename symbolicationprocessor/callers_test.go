package symbolicationprocessor

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// callSites is a C program whose calls are each followed by a statement of
// another line: a return address, looked up as it is, names the line after
// the call.
const callSites = `__attribute__((noinline)) int leaf(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += i;
  return s;
}
__attribute__((noinline)) int middle(int n) {
  leaf(n);
  return 7;
}
int main(void) {
  middle(3);
  return 0;
}
`

// The lines of the calls in callSites.
const (
	middleCallLine = 7
	mainCallLine   = 11
)

// callSiteBinary is callSites built with DWARF and a build id, a stripped
// copy of it (what runs, and what a crash's frames come from), and the
// addresses a stack of leaf < middle < main has: leaf's executing address
// and the two return addresses.
type callSiteBinary struct {
	debugFile, stripped string
	buildID             string
	leafAddr            uint64
	middleRet, mainRet  uint64
}

func buildCallSites(t *testing.T) callSiteBinary {
	t.Helper()
	for _, tool := range []string{"gcc", "objdump", "strip"} {
		testenv.LookPath(t, tool, "gcc, binutils")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "callsites.c")
	require.NoError(t, os.WriteFile(src, []byte(callSites), 0o644))
	b := callSiteBinary{debugFile: filepath.Join(dir, "debug", "callsites"), stripped: filepath.Join(dir, "callsites")}
	require.NoError(t, os.MkdirAll(filepath.Dir(b.debugFile), 0o755))
	out, err := exec.Command("gcc", "-g", "-O0", "-fPIE", "-pie", "-Wl,--build-id", "-o", b.debugFile, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command("strip", "-o", b.stripped, b.debugFile).CombinedOutput()
	require.NoError(t, err, "%s", out)
	b.buildID = gnuBuildID(t, b.stripped)
	require.Equal(t, b.buildID, gnuBuildID(t, b.debugFile))
	dis, err := exec.Command("objdump", "-d", "--no-show-raw-insn", b.debugFile).Output() // the same code, with its symbols
	require.NoError(t, err)
	b.middleRet = afterCall(t, string(dis), "leaf")
	b.mainRet = afterCall(t, string(dis), "middle")
	b.leafAddr = callTarget(t, string(dis), "leaf") + 4
	return b
}

// gnuBuildID reads an ELF file's GNU build id note.
func gnuBuildID(t *testing.T, path string) string {
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	require.NotNil(t, s)
	data, err := s.Data()
	require.NoError(t, err)
	return fmt.Sprintf("%x", data[16:]) // namesz, descsz, type, "GNU\0"
}

// afterCall is the address of the instruction after the call to callee:
// the return address a stack holds for its caller.
func afterCall(t *testing.T, dis, callee string) uint64 {
	lines := strings.Split(dis, "\n")
	for i, l := range lines {
		if strings.Contains(l, "call") && strings.Contains(l, "<"+callee+">") {
			for _, next := range lines[i+1:] {
				if m := regexp.MustCompile(`^\s*([0-9a-f]+):`).FindStringSubmatch(next); m != nil {
					addr, err := strconv.ParseUint(m[1], 16, 64)
					require.NoError(t, err)
					return addr
				}
			}
		}
	}
	t.Fatalf("no call to %s in the disassembly", callee)
	return 0
}

// callTarget is the address a call to callee jumps to: its start.
func callTarget(t *testing.T, dis, callee string) uint64 {
	m := regexp.MustCompile(`call\s+([0-9a-f]+) <` + callee + `>`).FindStringSubmatch(dis)
	require.NotNil(t, m, "no call to %s", callee)
	addr, err := strconv.ParseUint(m[1], 16, 64)
	require.NoError(t, err)
	return addr
}

const callSitesBase = 0x5555_0000_0000

// TestProfilesLookUpCallersOneByteBack: in a profile, a location that is
// only ever a caller is looked up at its return address less one, so that
// its line is the call's; the leaf's address is looked up as it is.
func TestProfilesLookUpCallersOneByteBack(t *testing.T) {
	b := buildCallSites(t)
	image := fmt.Sprintf(`{"type":"elf","code_file":"/usr/bin/callsites","code_id":%q,"image_addr":"%#x","image_size":1048576}`, b.buildID, callSitesBase)
	chunk := fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",
"platform":"native","release":"callsites@1.0.0","client_sdk":{"name":"sentry.native","version":"0.7.0"},
"profile":{"samples":[{"stack_id":0,"thread_id":"1","timestamp":1764000000.5}],"stacks":[[0,1,2]],
"frames":[{"instruction_addr":"%#x"},{"instruction_addr":"%#x"},{"instruction_addr":"%#x"}],"thread_metadata":{"1":{"name":"main"}}},
"debug_meta":{"images":[%s]}}`, callSitesBase+b.leafAddr, callSitesBase+b.middleRet, callSitesBase+b.mainRet, image)
	cfg := testConfig()
	cfg.Native.Directories = []string{filepath.Dir(b.debugFile)}
	require.NoError(t, cfg.Validate())
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	pd, err := s.processProfiles(context.Background(), toProfiles(t, chunk))
	require.NoError(t, err)
	got := strings.Join(locationLines(pd), "\n")
	assert.Regexp(t, `(?m)^leaf:\d+ \(.*callsites\.c\)$`, got)
	assert.Regexp(t, fmt.Sprintf(`(?m)^middle:%d \(.*callsites\.c\)$`, middleCallLine), got)
	assert.Regexp(t, fmt.Sprintf(`(?m)^main:%d \(.*callsites\.c\)$`, mainCallLine), got)
}

// TestLogsResolveNativeErrors: a crash's frames from the stripped binary,
// as sentry-native sends them (instruction_addr, the elf image with its
// code_id), get the functions, files and lines of its debug file; the
// callers' lines are those of their calls.
func TestLogsResolveNativeErrors(t *testing.T) {
	b := buildCallSites(t)
	frame := func(addr uint64) string {
		return fmt.Sprintf(`{"instruction_addr":"%#x","in_app":true}`, callSitesBase+addr)
	}
	event := fmt.Appendf(nil, `{"event_id":"9f1c5a0e8d3b4c2a9e7f6d5c4b3a2912","platform":"native","level":"fatal",
"exception":{"values":[{"type":"SIGSEGV","value":"Segfault","mechanism":{"type":"signalhandler","handled":false},
"stacktrace":{"frames":[%s,%s,%s]}}]},
"debug_meta":{"images":[{"type":"elf","code_file":%q,"code_id":%q,"image_addr":"%#x","image_size":1048576}]}}`,
		frame(b.mainRet), frame(b.middleRet), frame(b.leafAddr), b.stripped, b.buildID, callSitesBase)
	sink := new(consumertest.LogsSink)
	cfg := testConfig()
	cfg.Native.Directories = []string{filepath.Dir(b.debugFile)}
	newLogsProcessor(t, cfg, sink)(eventLogs(t, "native", event))
	lr := recordOf(sink.AllLogs()[0])
	frames := exceptionFrames(t, lr, 0)
	require.Len(t, frames, 3)
	var got []string
	for _, f := range frames {
		got = append(got, fmt.Sprintf("%v:%v %v %v", f["function"], f["lineno"], filepath.Base(fmt.Sprint(f["filename"])), f["symbolicator_status"]))
	}
	assert.Equal(t, fmt.Sprintf("main:%d callsites.c symbolicated", mainCallLine), got[0])
	assert.Equal(t, fmt.Sprintf("middle:%d callsites.c symbolicated", middleCallLine), got[1])
	assert.Regexp(t, `^leaf:\d+ callsites\.c symbolicated$`, got[2])
	assert.Equal(t, fmt.Sprintf("%#x", callSitesBase+b.middleRet), frames[1]["instruction_addr"], "the address as sent stays")
	text, _ := lr.Attributes().Get("exception.stacktrace")
	assert.Regexp(t, `^SIGSEGV: Segfault\n    at leaf \(.*callsites\.c:\d+\)\n    at middle \(.*callsites\.c:7\)\n    at main \(.*callsites\.c:11\)$`, text.Str())
}

package native

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
)

// nativeAddr is a native frame of a real profile: the image's build id and
// the address in the image's ELF address space.
type nativeAddr struct {
	buildID string
	addr    uint64
}

// TestEBPFProfilerFixture resolves the native frames that the
// OpenTelemetry eBPF profiler recorded (a real capture on a machine like
// this one) for the images whose very build is installed here: python3.11
// and bash from their exported symbols, libc from Debian's libc6-dbg
// debug file in /usr/lib/debug. The profiler reports ELF addresses, as
// Resolve takes them; the frames equal elfutils' eu-addr2line on the same
// files (function, line and file name; binutils' addr2line names a
// different file for one libc address and stretches exported symbols over
// the static functions after them), and the interpreter loop and libc's
// start-up code are named.
func TestEBPFProfilerFixture(t *testing.T) {
	requireTools(t, "eu-addr2line")
	addrs := ebpfNativeAddrs(t, fixtures.OTLPLines(t, "ebpf-profiler-b442421__python-node-go-load.otlp.jsonl"))
	local := map[string]string{} // build id → installed file with it
	for _, path := range []string{"/usr/bin/python3.11", "/usr/bin/bash", "/lib/x86_64-linux-gnu/libc.so.6"} {
		if f, err := os.Open(path); err == nil {
			if id, err := buildIDOf(f); err == nil {
				local[id] = path
			}
			f.Close()
		}
	}
	bin := t.TempDir()
	for _, path := range local {
		copyFile(t, path, filepath.Join(bin, filepath.Base(path)))
	}
	dirs := []string{bin}
	if _, err := os.Stat("/usr/lib/debug/.build-id"); err == nil {
		dirs = append(dirs, "/usr/lib/debug")
	}
	r, err := NewResolver(Options{DebugDirs: dirs})
	require.NoError(t, err)
	defer r.Close()

	byImage := map[string][]uint64{}
	for _, a := range addrs {
		if _, ok := local[a.buildID]; ok {
			byImage[a.buildID] = append(byImage[a.buildID], a.addr)
		}
	}
	if len(byImage) == 0 {
		t.Skip("none of the profiled images is installed here with the same build id")
	}
	names := map[string]bool{}
	checked := 0
	for id, list := range byImage {
		slices.Sort(list)
		list = slices.Compact(list)
		// The reference reads the file the resolver chose: the debug file
		// when there is one, else the binary.
		ref := local[id]
		if dbg := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"); regularFile(dbg) {
			ref = dbg
		}
		want := euAddr2line(t, ref, list)
		for _, a := range list {
			got, err := r.ResolveAddress(context.Background(), id, a)
			require.NoError(t, err)
			for i := range got {
				names[got[i].Function] = true
				if got[i].File != "" {
					got[i].File = filepath.Base(got[i].File)
				}
			}
			assert.Equal(t, want[a], got, "%s %#x", filepath.Base(local[id]), a)
			checked++
		}
	}
	t.Logf("%d native addresses of %d installed images checked against eu-addr2line", checked, len(byImage))
	if _, ok := local["571d98e01096d5c1c32420d229a6731a0a50d2a0"]; ok {
		assert.True(t, names["_PyEval_EvalFrameDefault"], "the interpreter loop is on python's stacks")
	}
	if _, ok := local["93ac61ec5a8eb1396f9fbd350e3169a558528a40"]; ok {
		assert.True(t, names["__libc_start_main_impl"] || names["__libc_start_call_main"], "libc's start-up code is named")
	}
}

// ebpfNativeAddrs returns the native frames of the profiles, leaf frames
// as recorded and callers moved back into their call instruction.
func ebpfNativeAddrs(t *testing.T, lines [][]byte) []nativeAddr {
	t.Helper()
	var out []nativeAddr
	for _, line := range lines {
		pd, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(line)
		require.NoError(t, err)
		dict := pd.Dictionary()
		str := func(i int32) string { return dict.StringTable().At(int(i)) }
		buildID := func(m pprofile.Mapping) string {
			for _, ai := range m.AttributeIndices().All() {
				attr := dict.AttributeTable().At(int(ai))
				if str(attr.KeyStrindex()) == "process.executable.build_id.gnu" {
					return attr.Value().AsString()
				}
			}
			return ""
		}
		for _, rp := range pd.ResourceProfiles().All() {
			for _, sp := range rp.ScopeProfiles().All() {
				for _, prof := range sp.Profiles().All() {
					for _, s := range prof.Samples().All() {
						stack := dict.StackTable().At(int(s.StackIndex()))
						for depth, li := range stack.LocationIndices().All() {
							loc := dict.LocationTable().At(int(li))
							if loc.MappingIndex() <= 0 || loc.Lines().Len() > 0 {
								continue // no image, or already symbolized by the profiler
							}
							id := buildID(dict.MappingTable().At(int(loc.MappingIndex())))
							if id == "" || loc.Address() == 0 {
								continue
							}
							a := loc.Address()
							if depth > 0 {
								a--
							}
							out = append(out, nativeAddr{buildID: id, addr: a})
						}
					}
				}
			}
		}
	}
	require.NotEmpty(t, out, "the capture has native frames")
	return out
}

// euAddr2line resolves addresses with elfutils' eu-addr2line -i, frames
// innermost first, keeping file base names (elfutils and debug/dwarf join
// relative compilation directories differently). An address no symbol
// covers has no frames.
func euAddr2line(t *testing.T, file string, addrs []uint64) map[uint64][]Frame {
	t.Helper()
	args := []string{"-a", "-f", "-i", "-C", "-e", file}
	for _, a := range addrs {
		args = append(args, fmt.Sprintf("%#x", a))
	}
	out, err := exec.Command("eu-addr2line", args...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && len(out) > 0 {
		err = nil // it exits 1 when some address has no symbol, and still prints
	}
	require.NoError(t, err)
	result := map[uint64][]Frame{}
	var cur uint64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "0x") {
			cur, err = strconv.ParseUint(line[2:], 16, 64)
			require.NoError(t, err)
			result[cur] = nil
			continue
		}
		require.True(t, sc.Scan(), "a position follows each function")
		name, _, inlined := strings.Cut(line, " inlined at ")
		if name == "??" {
			continue
		}
		pos := strings.Split(sc.Text(), ":")
		f := Frame{Function: name, Inlined: inlined}
		if len(pos) >= 2 && pos[0] != "??" {
			f.File = filepath.Base(pos[0])
			f.Line, _ = strconv.Atoi(pos[1])
		}
		result[cur] = append(result[cur], f)
	}
	return result
}

func regularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

package native

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// requireTools skips the test (fails it under REQUIRE_TOOLS=1) when a tool
// it runs is missing.
func requireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testenv.LookPath(t, tool, "gcc, g++, binutils")
	}
}

// program is a test program compiled with debug info, then split the way
// distributions ship binaries: a stripped binary and a debug file.
type program struct {
	binary   string // unstripped, as compiled
	debug    string // objcopy --only-keep-debug
	stripped string // objcopy --strip-all
	buildID  string
}

// compile builds testdata/<src> with compiler and -g -O2 plus flags in dir.
func compile(t testing.TB, dir, compiler, src string, flags ...string) program {
	t.Helper()
	name := strings.TrimSuffix(src, filepath.Ext(src))
	p := program{
		binary:   filepath.Join(dir, name),
		debug:    filepath.Join(dir, name+".debug"),
		stripped: filepath.Join(dir, name+".stripped"),
	}
	abs, err := filepath.Abs(filepath.Join("testdata", src))
	require.NoError(t, err)
	args := append([]string{"-g", "-O2", "-o", p.binary, abs}, flags...)
	runTool(t, compiler, args...)
	runTool(t, "objcopy", "--only-keep-debug", p.binary, p.debug)
	runTool(t, "objcopy", "--strip-all", p.binary, p.stripped)
	f, err := os.Open(p.binary)
	require.NoError(t, err)
	defer f.Close()
	p.buildID, err = buildIDOf(f)
	require.NoError(t, err)
	return p
}

// layout puts a debug file where gdb and debuginfod look for it:
// <dir>/.build-id/<first byte>/<rest>.debug.
func layout(t testing.TB, dir, buildID, debugFile string) {
	t.Helper()
	target := filepath.Join(dir, ".build-id", buildID[:2], buildID[2:]+".debug")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	data, err := os.ReadFile(debugFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(target, data, 0o644))
}

func runTool(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return string(out)
}

// addr2line resolves addresses with binutils' addr2line (-i: inlined
// frames, innermost first; -C: demangled), the reference the resolver is
// checked against. Frames it cannot place have Function "??" or Line 0.
func addr2line(t testing.TB, file string, addrs []uint64) map[uint64][]Frame {
	t.Helper()
	return symbolize(t, "addr2line", file, addrs)
}

// symbolize runs addr2line or a tool with its interface and output
// (llvm-symbolizer --output-style=GNU).
func symbolize(t testing.TB, tool, file string, addrs []uint64, flags ...string) map[uint64][]Frame {
	t.Helper()
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool, append(flags, "-a", "-f", "-i", "-C", "-e", file)...)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
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
		require.True(t, sc.Scan(), "addr2line prints a position after each function")
		file, lineNo := splitPosition(sc.Text())
		if line == "??" {
			line = ""
		}
		if file == "??" {
			file = ""
		}
		result[cur] = append(result[cur], Frame{Function: line, File: file, Line: lineNo})
	}
	for a, frames := range result {
		for i := range frames[:max(len(frames)-1, 0)] {
			result[a][i].Inlined = true
		}
	}
	return result
}

// splitPosition reads "file:line" or "file:line (discriminator n)".
func splitPosition(s string) (string, int) {
	s, _, _ = strings.Cut(s, " (discriminator")
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s[:i], 0
	}
	return s[:i], n
}

// textRange is the address range of an ELF file's executable segment.
func textRange(t testing.TB, path string) (lo, hi uint64) {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			return p.Vaddr, p.Vaddr + p.Memsz
		}
	}
	t.Fatalf("%s has no executable segment", path)
	return 0, 0
}

// sourceLine returns the line of testdata/prof.c, the source of the test
// binaries, holding marker.
func sourceLine(t testing.TB, marker string) int {
	t.Helper()
	const src = "prof.c"
	data, err := os.ReadFile(filepath.Join("testdata", src))
	require.NoError(t, err)
	for i, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %q", src, marker)
	return 0
}

// firstLoadVaddr is the page-aligned vaddr of an ELF file's first PT_LOAD,
// where image_addr points once the file is mapped.
func firstLoadVaddr(t testing.TB, path string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return p.Vaddr &^ (p.Align - 1)
		}
	}
	t.Fatalf("%s has no PT_LOAD", path)
	return 0
}

// Accessors only the tests use; production code reaches the same state
// through its own paths.

// loadImageFile loads the debug file at path (for a universal Mach-O
// file, its first architecture), unbounded.
func loadImageFile(path string) (*image, error) { return loadImageFileID(path, "", 0) }

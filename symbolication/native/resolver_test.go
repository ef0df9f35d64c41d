package native

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfProfile is what testdata/prof.c prints: its load bias and the stacks
// its SIGPROF handler recorded, innermost first.
type selfProfile struct {
	bias   uint64
	stacks [][]uint64
}

func parseSelfProfile(t *testing.T, out string) selfProfile {
	t.Helper()
	var p selfProfile
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "BIAS":
			v, err := strconv.ParseUint(fields[1], 16, 64)
			require.NoError(t, err)
			p.bias = v
		case "SAMPLE":
			var stack []uint64
			for _, f := range fields[1:] {
				v, err := strconv.ParseUint(f, 16, 64)
				require.NoError(t, err)
				stack = append(stack, v)
			}
			p.stacks = append(p.stacks, stack)
		}
	}
	require.NotEmpty(t, p.stacks)
	return p
}

// fileAddresses turns a recorded stack into addresses of the program's
// ELF file, keeping only the program's own frames. backtrace() in a signal
// handler returns the handler, the kernel's signal trampoline, the
// interrupted instruction, then return addresses: those are moved back
// one byte into their call instruction, as a profiler symbolicates them.
func fileAddresses(stack []uint64, bias, lo, hi uint64) []uint64 {
	var out []uint64
	for i, a := range stack {
		if i != 2 {
			a--
		}
		if fa := a - bias; a >= bias && fa >= lo && fa < hi {
			out = append(out, fa)
		}
	}
	return out
}

// TestResolveSelfProfile: a C program built with -g -O2 profiles itself
// with setitimer + backtrace; its debug info is split off into the
// .build-id layout and the stripped binary is what runs. Every address of
// every recorded stack resolves to what binutils' addr2line says of it
// (inlined frames included), and the hot path reads as the source wrote it.
func TestResolveSelfProfile(t *testing.T) {
	requireTools(t, "gcc", "objcopy", "addr2line")
	tests := []struct {
		name  string
		flags []string
	}{
		{"PIE, DWARF 5", nil},
		{"DWARF 4", []string{"-gdwarf-4"}},
		{"position-dependent executable", []string{"-no-pie", "-fno-pie"}},
		{"compressed debug sections", []string{"-gz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testSelfProfile(t, tt.flags) })
	}
}

func testSelfProfile(t *testing.T, flags []string) {
	dir := t.TempDir()
	prog := compile(t, dir, "gcc", "prof.c", flags...)
	debugDir := filepath.Join(dir, "debug")
	layout(t, debugDir, prog.buildID, prog.debug)
	profile := parseSelfProfile(t, runTool(t, prog.stripped))
	lo, hi := textRange(t, prog.binary)

	r, err := NewResolver(Options{DebugDirs: []string{debugDir}})
	require.NoError(t, err)
	defer r.Close()
	ctx := context.Background()

	var all []uint64
	for _, s := range profile.stacks {
		all = append(all, fileAddresses(s, profile.bias, lo, hi)...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	want := addr2line(t, prog.debug, all)
	for _, a := range all {
		got, err := r.ResolveAddress(ctx, prog.buildID, a)
		require.NoError(t, err)
		assert.Equal(t, want[a], got, "address %#x", a)
	}

	// The hot loop: mix inlined into checksum inlined into work, called
	// by run, called by main, each caller at the line that calls.
	callSites := []Frame{
		{Function: "checksum", Line: sourceLine(t, "checksum: call mix"), Inlined: true},
		{Function: "work", Line: sourceLine(t, "work: call checksum")},
		{Function: "run", Line: sourceLine(t, "run: call work")},
		{Function: "main", Line: sourceLine(t, "main: call run")},
	}
	hot := 0
	for _, s := range profile.stacks {
		var frames []Frame
		for _, a := range fileAddresses(s, profile.bias, lo, hi) {
			fs, err := r.ResolveAddress(ctx, prog.buildID, a)
			require.NoError(t, err)
			frames = append(frames, fs...)
		}
		i := slices.IndexFunc(frames, func(f Frame) bool { return f.Function == "mix" })
		if i < 0 || len(frames) < i+5 {
			continue
		}
		hot++
		assert.True(t, frames[i].Inlined)
		assert.Equal(t, "prof.c", filepath.Base(frames[i].File))
		for j, want := range callSites {
			got := frames[i+1+j]
			assert.Equal(t, want, Frame{Function: got.Function, Line: got.Line, Inlined: got.Inlined}, "sample frame %d", i+1+j)
		}
	}
	assert.Greater(t, hot, len(profile.stacks)/4, "most CPU time is in the inlined hash: %d of %d samples", hot, len(profile.stacks))

	// Sentry's form of the same addresses: the absolute instruction_addr,
	// and image_addr where the first segment was mapped (the bias plus
	// that segment's page-aligned address: 0 for PIE, 0x400000 without).
	firstSegment := firstLoadVaddr(t, prog.binary)
	for _, a := range all[:min(len(all), 20)] {
		want, err := r.ResolveAddress(ctx, prog.buildID, a)
		require.NoError(t, err)
		got, err := r.ResolveAbsolute(ctx, prog.buildID, a+profile.bias, profile.bias+firstSegment)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	t.Logf("%d samples, %d distinct addresses of the program checked against addr2line, %d samples in the inlined hash", len(profile.stacks), len(all), hot)
}

// TestResolveSources: the same program found three ways gives the same
// frames; a stripped binary alone still names its exported functions.
func TestResolveSources(t *testing.T) {
	requireTools(t, "gcc", "objcopy")
	dir := t.TempDir()
	prog := compile(t, dir, "gcc", "prof.c")
	sym := symbolOf(t, prog.binary, "work")

	layoutDir := filepath.Join(dir, "layout")
	layout(t, layoutDir, prog.buildID, prog.debug)
	plainDir := filepath.Join(dir, "plain", "usr", "bin")
	require.NoError(t, os.MkdirAll(plainDir, 0o755))
	copyFile(t, prog.binary, filepath.Join(plainDir, "prof"))
	strippedDir := filepath.Join(dir, "stripped")
	require.NoError(t, os.MkdirAll(strippedDir, 0o755))
	copyFile(t, prog.stripped, filepath.Join(strippedDir, "prof"))

	tests := []struct {
		name     string
		dirs     []string
		function string
		withLine bool
	}{
		{"build-id layout", []string{layoutDir}, "work", true},
		{"unstripped binary found by scanning", []string{filepath.Join(dir, "plain")}, "work", true},
		{"layout preferred over a stripped copy", []string{strippedDir, layoutDir}, "work", true},
		{"stripped executable: its functions are not in .dynsym", []string{strippedDir}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewResolver(Options{DebugDirs: tt.dirs})
			require.NoError(t, err)
			defer r.Close()
			frames, err := r.ResolveAddress(context.Background(), prog.buildID, sym+4)
			require.NoError(t, err)
			if tt.function == "" {
				assert.Empty(t, frames)
				return
			}
			require.NotEmpty(t, frames)
			last := frames[len(frames)-1]
			assert.Equal(t, tt.function, last.Function)
			assert.Equal(t, tt.withLine, last.Line > 0, "%+v", last)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	dir := t.TempDir()
	r, err := NewResolver(Options{DebugDirs: []string{dir}})
	require.NoError(t, err)
	ctx := context.Background()

	_, err = r.ResolveAddress(ctx, "0123456789abcdef0123456789abcdef01234567", 0x1000)
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = r.ResolveAddress(ctx, "not-hex", 0x1000)
	assert.ErrorContains(t, err, "hex")
	_, err = r.ResolveAbsolute(ctx, "0123456789abcdef", 0x10, 0x20)
	assert.ErrorContains(t, err, "below image address")

	// A file in the layout that carries another build id is not used.
	wrong := filepath.Join(dir, ".build-id", "aa", "bbbb.debug")
	require.NoError(t, os.MkdirAll(filepath.Dir(wrong), 0o755))
	require.NoError(t, os.WriteFile(wrong, []byte("not an ELF file"), 0o644))
	_, err = r.ResolveAddress(ctx, "aabbbb", 0x1000)
	assert.ErrorContains(t, err, "not an ELF file")

	_, err = NewResolver(Options{DebugDirs: []string{filepath.Join(dir, "missing")}})
	assert.Error(t, err)
	_, err = NewResolver(Options{DebuginfodURLs: []string{"http://127.0.0.1:1"}})
	assert.ErrorContains(t, err, "CacheDir")
	_, err = NewResolver(Options{DebuginfodURLs: []string{"ftp://x"}, CacheDir: dir})
	assert.ErrorContains(t, err, "http")
}

func symbolOf(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := loadImage(f)
	require.NoError(t, err)
	for _, s := range img.syms.syms {
		if s.name == name {
			return s.addr
		}
	}
	t.Fatalf("%s has no symbol %s", path, name)
	return 0
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, data, 0o755))
}

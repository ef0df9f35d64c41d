package native

import (
	"context"
	"debug/macho"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testenv"
)

// llvmTool finds an LLVM tool by its versioned Debian name or in the
// LLVM 14 directory, skipping the test when it is missing.
func llvmTool(t *testing.T, name string) string {
	t.Helper()
	for _, candidate := range []string{name + "-14", name, "/usr/lib/llvm-14/bin/" + name} {
		if p, err := exec.LookPath(candidate); err == nil {
			return p
		}
	}
	testenv.MissingTool(t, "%s not installed (Debian: clang-14, lld-14, llvm-14)", name)
	return ""
}

// machoLib builds testdata/macho.c into a macOS dylib for arch and its
// dSYM bundle, and returns the dylib, the dSYM's DWARF file and the UUID.
func machoLib(t *testing.T, dir, arch string) (dylib, dsymDWARF, uuid string) {
	t.Helper()
	clang, lld, dsymutil := llvmTool(t, "clang"), llvmTool(t, "ld64.lld"), llvmTool(t, "dsymutil")
	src, err := filepath.Abs(filepath.Join("testdata", "macho.c"))
	require.NoError(t, err)
	target := map[string]string{"x86_64": "x86_64-apple-macos11", "arm64": "arm64-apple-macos11"}[arch]
	obj := filepath.Join(dir, "demo-"+arch+".o")
	dylib = filepath.Join(dir, arch, "libdemo.dylib")
	require.NoError(t, os.MkdirAll(filepath.Dir(dylib), 0o755))
	runTool(t, clang, "-target", target, "-g", "-O2", "-c", src, "-o", obj)
	runTool(t, lld, "-dylib", "-arch", arch, "-platform_version", "macos", "11.0", "11.0", "-o", dylib, obj)
	dsym := filepath.Join(dir, "dsyms-"+arch, "libdemo.dylib.dSYM")
	runTool(t, dsymutil, dylib, "-o", dsym)
	dsymDWARF = filepath.Join(dsym, "Contents", "Resources", "DWARF", "libdemo.dylib")
	f, err := macho.Open(dylib)
	require.NoError(t, err)
	defer f.Close()
	return dylib, dsymDWARF, machoUUID(f)
}

// TestResolveMachO: a macOS dylib built with clang -g -O2 and ld64.lld,
// its dSYM written by dsymutil. Found by scanning a directory of dSYM
// bundles under the UUID in the form Sentry's Cocoa SDK sends as debug_id
// (upper case, hyphenated), every byte of its code resolves to what
// llvm-symbolizer says of the dSYM; the dylib alone names its functions
// from its symbol table; ResolveAbsolute maps image_addr.
func TestResolveMachO(t *testing.T) {
	symbolizer := llvmTool(t, "llvm-symbolizer")
	dir := t.TempDir()
	dylib, dsymDWARF, uuid := machoLib(t, dir, "x86_64")
	require.Len(t, uuid, 32)
	debugID := strings.ToUpper(uuid[:8] + "-" + uuid[8:12] + "-" + uuid[12:16] + "-" + uuid[16:20] + "-" + uuid[20:])

	r, err := NewResolver(Options{DebugDirs: []string{filepath.Join(dir, "dsyms-x86_64")}})
	require.NoError(t, err)
	f, err := macho.Open(dylib)
	require.NoError(t, err)
	text := f.Section("__text")
	require.NotNil(t, text)
	f.Close()
	var addrs []uint64
	for a := text.Addr; a < text.Addr+text.Size; a++ {
		addrs = append(addrs, a)
	}
	want := symbolize(t, symbolizer, dsymDWARF, addrs, "--output-style=GNU")
	ctx := context.Background()
	names := map[string]bool{}
	for _, a := range addrs {
		got, err := r.ResolveAddress(ctx, debugID, a)
		require.NoError(t, err)
		assert.Equal(t, want[a], got, "address %#x", a)
		for _, fr := range got {
			names[fr.Function] = true
		}
		abs, err := r.ResolveAbsolute(ctx, debugID, 0x10a000000+a, 0x10a000000)
		require.NoError(t, err)
		assert.Equal(t, got, abs, "a dylib's __TEXT starts at 0")
	}
	assert.True(t, names["sum_squares"] && names["entry"] && names["square"], "the functions, and the inlined helper: %v", names)

	// The dylib alone: its symbol table, no lines.
	symOnly, err := NewResolver(Options{DebugDirs: []string{filepath.Dir(dylib)}})
	require.NoError(t, err)
	sumSquares := uint64(0)
	for _, s := range mustLoad(t, dylib).syms.syms {
		if s.name == "sum_squares" {
			sumSquares = s.addr
		}
	}
	require.NotZero(t, sumSquares)
	got, err := symOnly.ResolveAddress(ctx, uuid, sumSquares+2)
	require.NoError(t, err)
	assert.Equal(t, []Frame{{Function: "sum_squares"}}, got)
}

// TestResolveMachOUniversal: a universal file of an x86_64 and an arm64
// build holds two images; each is found by its own UUID.
func TestResolveMachOUniversal(t *testing.T) {
	lipo := llvmTool(t, "llvm-lipo")
	dir := t.TempDir()
	x86, _, uuidX86 := machoLib(t, dir, "x86_64")
	arm, _, uuidArm := machoLib(t, dir, "arm64")
	require.NotEqual(t, uuidX86, uuidArm)
	fatDir := filepath.Join(dir, "fat")
	require.NoError(t, os.MkdirAll(fatDir, 0o755))
	runTool(t, lipo, "-create", x86, arm, "-output", filepath.Join(fatDir, "libdemo.dylib"))

	r, err := NewResolver(Options{DebugDirs: []string{fatDir}})
	require.NoError(t, err)
	for _, tt := range []struct{ uuid, thin string }{{uuidX86, x86}, {uuidArm, arm}} {
		var entry uint64
		for _, s := range mustLoad(t, tt.thin).syms.syms {
			if s.name == "entry" {
				entry = s.addr
			}
		}
		require.NotZero(t, entry)
		got, err := r.ResolveAddress(context.Background(), tt.uuid, entry)
		require.NoError(t, err)
		assert.Equal(t, []Frame{{Function: "entry"}}, got, tt.thin)
	}
}

func mustLoad(t *testing.T, path string) *image {
	t.Helper()
	img, err := loadImageFile(path)
	require.NoError(t, err)
	return img
}

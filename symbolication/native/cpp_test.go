package native

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveCPlusPlus sweeps a C++ program built with g++ -g -O2: every
// third byte of every function in its symbol table resolves, from the split debug file, to the frames binutils' addr2line -C
// gives (demangled names with scopes and parameters, inlined library
// code included).
func TestResolveCPlusPlus(t *testing.T) {
	requireTools(t, "g++", "objcopy", "addr2line")
	dir := t.TempDir()
	prog := compile(t, dir, "g++", "shapes.cpp")
	debugDir := filepath.Join(dir, "debug")
	layout(t, debugDir, prog.buildID, prog.debug)
	r, err := NewResolver(Options{DebugDirs: []string{debugDir}})
	require.NoError(t, err)
	defer r.Close()

	img, err := loadImageFile(prog.binary)
	require.NoError(t, err)
	lo, hi := textRange(t, prog.binary)
	var addrs []uint64
	for _, s := range img.syms.syms {
		if s.addr >= lo && s.addr < hi && s.size > 0 {
			for a := s.addr; a < s.addr+s.size; a += 3 {
				addrs = append(addrs, a)
			}
			addrs = append(addrs, s.addr+s.size-1)
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	require.Greater(t, len(addrs), 30)
	want := addr2line(t, prog.debug, addrs)

	names := map[string]bool{}
	var compared, differ int
	for _, a := range addrs {
		got, err := r.ResolveAddress(context.Background(), prog.buildID, a)
		require.NoError(t, err)
		require.Len(t, got, len(want[a]), "address %#x: %+v, addr2line %+v", a, got, want[a])
		for i := range got {
			names[got[i].Function] = true
			assert.Equal(t, want[a][i].File, got[i].File, "address %#x frame %d", a, i)
			assert.Equal(t, want[a][i].Line, got[i].Line, "address %#x frame %d", a, i)
			assert.Equal(t, want[a][i].Inlined, got[i].Inlined, "address %#x frame %d", a, i)
			compared++
			// addr2line names the out-of-line .cold part of a function by
			// its symbol ("main.cold") or its bare DW_AT_name; the resolver
			// names it as the function it belongs to.
			wantName := strings.TrimSuffix(want[a][i].Function, ".cold")
			if got[i].Function != wantName && !strings.Contains(got[i].Function, wantName+"(") {
				// Known, rare disagreements: binutils names an inlined
				// lambda after its enclosing function at some addresses, and
				// the two demanglers name an inheriting constructor after
				// the derived and the base class respectively.
				differ++
				t.Logf("address %#x frame %d: %q, addr2line %q", a, i, got[i].Function, want[a][i].Function)
			}
		}
	}
	assert.LessOrEqual(t, differ*100, compared, "names differ from addr2line's in at most 1%% of %d frames", compared)
	t.Logf("%d addresses, %d frames compared with addr2line, %d names differ", len(addrs), compared, differ)
	for _, name := range []string{
		"geo::Circle::area() const",
		"geo::Rect::area() const",
		"double geo::total<double>(std::vector<double, std::allocator<double> > const&)",
		"geo::Point::operator+(geo::Point const&) const",
	} {
		assert.True(t, names[name], "%s resolved somewhere; names: %v", name, names)
	}
}

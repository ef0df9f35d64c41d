package native

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// FuzzLoadImage: any bytes load as an ELF or Mach-O image or fail with an
// error (never a panic of debug/elf, debug/macho or debug/dwarf), and a
// loaded image resolves any address.
func FuzzLoadImage(f *testing.F) {
	f.Add(writeELF(f, "0011223344556677", 0, []testFunc{{"alpha", 0x1000, 0x20}, {"_ZN3foo3barEi", 0x1020, 0}}, 0))
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Add([]byte("\xcf\xfa\xed\xfe\x07\x00\x00\x01\x03\x00\x00\x00\x06\x00\x00\x00\x01\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1b\x00\x00\x00\x18\x00\x00\x00abcdefghijklmnop"))
	if data, ok := compiledSeed(f); ok {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = buildIDOf(bytes.NewReader(data))
		img, err := loadImage(bytes.NewReader(data))
		if err != nil {
			if img, err = loadMachO(bytes.NewReader(data), ""); err != nil {
				return
			}
		}
		if img.size <= 0 {
			t.Fatalf("size %d", img.size)
		}
		for _, addr := range []uint64{0, 0x1000, 0x1010, 0x1130, ^uint64(0)} {
			for _, fr := range img.resolve(addr) {
				if fr.Line < 0 {
					t.Fatalf("line %d", fr.Line)
				}
			}
		}
	})
}

// compiledSeed is a small C program's debug file (DWARF and symbols), when
// a compiler is at hand, so the fuzzer starts from real DWARF.
func compiledSeed(f *testing.F) ([]byte, bool) {
	for _, tool := range []string{"gcc", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, false
		}
	}
	dir := f.TempDir()
	src := filepath.Join(dir, "seed.c")
	code := "static inline int sq(int x) { return x * x; }\nint f(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }\n"
	if os.WriteFile(src, []byte(code), 0o644) != nil {
		return nil, false
	}
	obj, dbg := filepath.Join(dir, "seed.so"), filepath.Join(dir, "seed.debug")
	if exec.Command("gcc", "-g", "-O2", "-shared", "-fPIC", "-o", obj, src).Run() != nil ||
		exec.Command("objcopy", "--only-keep-debug", obj, dbg).Run() != nil {
		return nil, false
	}
	data, err := os.ReadFile(dbg)
	return data, err == nil
}

package native

import (
	"context"
	"debug/elf"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkLoad is a cold load of each kind of artifact: a Go program
// (gofmt, built with DWARF: compressed sections, ~2,500 functions), that
// binary with its DWARF stripped (symbol table only), a C program's split debug file, and
// a debuginfod download of it into an empty cache plus its parse.
func BenchmarkLoad(b *testing.B) {
	goBinary := buildGofmt(b)
	b.Run("dwarf-go-binary", func(b *testing.B) { benchLoadFile(b, goBinary) })
	if _, err := exec.LookPath("objcopy"); err == nil {
		stripped := filepath.Join(b.TempDir(), "symtab-only")
		if out, err := exec.Command("objcopy", "--strip-debug", goBinary, stripped).CombinedOutput(); err != nil {
			b.Fatalf("objcopy: %v: %s", err, out)
		}
		b.Run("symtab-only-go-binary", func(b *testing.B) { benchLoadFile(b, stripped) })
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		return
	}
	prog := compile(b, b.TempDir(), "g++", "shapes.cpp")
	b.Run("dwarf-cpp-debug-file", func(b *testing.B) { benchLoadFile(b, prog.debug) })
	b.Run("debuginfod-fetch-and-parse", func(b *testing.B) {
		data, err := os.ReadFile(prog.debug)
		if err != nil {
			b.Fatal(err)
		}
		fake := &fakeDebuginfod{files: map[string][]byte{prog.buildID: data}, requests: map[string]int{}}
		srv := httptest.NewServer(fake)
		defer srv.Close()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r, err := NewResolver(Options{DebuginfodURLs: []string{srv.URL}, CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.ResolveAddress(context.Background(), prog.buildID, 0x1000); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchLoadFile(b *testing.B, path string) {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var img *image
	for b.Loop() {
		if img, err = loadImageFile(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(img.size)/(1<<20), "MiB-held")
}

// BenchmarkResolveWarm is 10,000 lookups of addresses spread over the
// code of a loaded image: in a Go program (DWARF, then symbols only), and through a Resolver (build id, lock, LRU) for a C++
// program.
func BenchmarkResolveWarm(b *testing.B) {
	goBinary := buildGofmt(b)
	img, err := loadImageFile(goBinary)
	if err != nil {
		b.Fatal(err)
	}
	addrs := textAddresses(b, goBinary, 10_000)
	b.Run("dwarf-go-binary", func(b *testing.B) {
		benchLookups(b, len(addrs), func(i int) []Frame { return img.resolve(addrs[i]) })
	})
	symsOnly := &image{syms: img.syms}
	b.Run("symtab-go-binary", func(b *testing.B) {
		benchLookups(b, len(addrs), func(i int) []Frame { return symsOnly.resolve(addrs[i]) })
	})
	if _, err := exec.LookPath("g++"); err != nil {
		return
	}
	dir := b.TempDir()
	prog := compile(b, dir, "g++", "shapes.cpp")
	layout(b, filepath.Join(dir, "debug"), prog.buildID, prog.debug)
	r, err := NewResolver(Options{DebugDirs: []string{filepath.Join(dir, "debug")}})
	if err != nil {
		b.Fatal(err)
	}
	progAddrs := textAddresses(b, prog.binary, 10_000)
	ctx := context.Background()
	b.Run("resolver-cpp-program", func(b *testing.B) {
		benchLookups(b, len(progAddrs), func(i int) []Frame {
			frames, err := r.ResolveAddress(ctx, prog.buildID, progAddrs[i])
			if err != nil {
				b.Fatal(err)
			}
			return frames
		})
	})
}

func benchLookups(b *testing.B, n int, lookup func(i int) []Frame) {
	b.ReportAllocs()
	found := 0
	for b.Loop() {
		for i := range n {
			if len(lookup(i)) > 0 {
				found++
			}
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "lookups/s")
	b.ReportMetric(float64(found)/float64(b.N*n), "found-ratio")
}

// textAddresses picks n addresses of an ELF file's executable segment.
func textAddresses(b *testing.B, path string, n int) []uint64 {
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			out := make([]uint64, n)
			for i := range out {
				out[i] = p.Vaddr + rng.Uint64N(p.Memsz)
			}
			return out
		}
	}
	b.Fatalf("%s has no executable segment", path)
	return nil
}

// buildGofmt builds the standard library's gofmt with DWARF (go test
// links its own binary without), a Go program of realistic size.
func buildGofmt(b *testing.B) string {
	out := filepath.Join(b.TempDir(), "gofmt")
	if msg, err := exec.Command("go", "build", "-o", out, "cmd/gofmt").CombinedOutput(); err != nil {
		b.Skipf("building gofmt: %v: %s", err, msg)
	}
	return out
}

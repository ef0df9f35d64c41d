package native

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sources"
)

// image is a loaded debug file: what Resolve needs of it, parsed once.
type image struct {
	dwarf    *dwarfTables // nil without DWARF
	syms     symbolTable
	imageVMA uint64 // page-aligned vaddr of the first PT_LOAD: where image_addr points
	size     int64
}

// errNotELF marks content that is not an ELF file at all.
var errNotELF = errors.New("not an ELF file")

// loadImageFileID loads the image with id from the ELF or Mach-O file at
// path, a regular file of at most maxBytes (0: no bound).
func loadImageFileID(path, id string, maxBytes int64) (*image, error) {
	f, _, err := sources.OpenRegular(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := loadImageOfFormat(f, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// loadImageOfFormat loads a Mach-O image (the one with id) or an ELF file,
// by the file's magic.
func loadImageOfFormat(f io.ReaderAt, id string) (*image, error) {
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err == nil && isMachO(magic) {
		return loadMachO(f, id)
	}
	return loadImage(f)
}

// loadImage parses an ELF file's symbols and DWARF. debug/elf and
// debug/dwarf can panic on hostile input: a panic becomes an error.
func loadImage(r io.ReaderAt) (img *image, err error) {
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("malformed ELF or DWARF: %v", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotELF, err)
	}
	img = &image{syms: newSymbolTable(f), imageVMA: imageVMA(f)}
	if img.dwarf, err = elfDWARF(f); err != nil {
		return nil, err
	}
	img.measure()
	return img, nil
}

// elfDWARF flattens a file's DWARF; nil without any.
func elfDWARF(f *elf.File) (*dwarfTables, error) {
	if !hasDWARF(f) {
		return nil, nil
	}
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("reading DWARF: %w", err)
	}
	return loadDWARF(d, debugInfoSize(f))
}

// measure sets the memory the image holds, what the cache charges.
func (img *image) measure() {
	img.size = 64 + img.syms.bytes()
	if img.dwarf != nil {
		img.size += img.dwarf.bytes()
	}
}

// hasDWARF reports whether f carries DWARF with content (a stripped file
// may keep section headers of type NOBITS).
func hasDWARF(f *elf.File) bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}

// debugInfoSize is the (uncompressed) size of the DWARF entries.
func debugInfoSize(f *elf.File) uint64 {
	var n uint64
	for _, name := range []string{".debug_info", ".debug_types"} {
		if s := f.Section(name); s != nil {
			n += s.Size
		}
	}
	if s := f.Section(".zdebug_info"); s != nil {
		n += 32 * s.Size // the legacy GNU form's size is compressed; allow for the ratio
	}
	return n
}

// imageVMA is the page-aligned virtual address of the first loadable
// segment: the address the image's first mapping starts at before
// relocation, so that image_addr (where that mapping was loaded) maps to
// it. 0 for PIE executables and shared libraries.
func imageVMA(f *elf.File) uint64 {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return p.Vaddr &^ (pageAlign(p.Align) - 1)
		}
	}
	return 0
}

// pageAlign is a segment's alignment, 1 when it is not a power of two.
func pageAlign(align uint64) uint64 {
	if align == 0 || align&(align-1) != 0 {
		return 1
	}
	return align
}

// resolve returns the frames at addr (a virtual address of the ELF file).
func (img *image) resolve(addr uint64) []Frame {
	var frames []Frame
	if img.dwarf != nil {
		frames = img.dwarf.frames(addr)
	}
	sym, ok := img.syms.lookup(addr)
	switch {
	case len(frames) > 0:
		if last := &frames[len(frames)-1]; ok && symbolNamesBetter(last.Function, sym.name) {
			last.Function = sym.name
		}
		return frames
	case ok:
		return []Frame{img.symbolFrame(sym, addr)}
	}
	return nil
}

// symbolFrame is the frame of a symbol DWARF has no function for, with
// the line table's position when there is one.
func (img *image) symbolFrame(sym symbol, addr uint64) Frame {
	f := Frame{Function: sym.name}
	if img.dwarf != nil {
		f.File, f.Line = img.dwarf.line(addr)
	}
	return f
}

// symbolNamesBetter reports whether the symbol's name says more than the
// DWARF one: GCC records no linkage name for C++ functions of internal
// linkage (static, anonymous namespace), DWARF then has only the bare
// name, and the symbol's demangled name has its scope and parameters.
func symbolNamesBetter(dwarfName, symName string) bool {
	return dwarfName == "" || !strings.Contains(dwarfName, "(") && strings.Contains(symName, dwarfName+"(")
}

// buildIDOf reads the GNU build id note of an ELF file, hex-encoded.
func buildIDOf(r io.ReaderAt) (id string, err error) {
	defer func() {
		if p := recover(); p != nil {
			id, err = "", fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNotELF, err)
	}
	for _, n := range notes(f) {
		if id := noteBuildID(n, f.ByteOrder); id != "" {
			return id, nil
		}
	}
	return "", errors.New("no GNU build id note")
}

// notes are the readers of a file's note sections, then of its note
// segments (a stripped file may keep only those).
func notes(f *elf.File) []io.Reader {
	var out []io.Reader
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			out = append(out, s.Open())
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE {
			out = append(out, p.Open())
		}
	}
	return out
}

// noteBuildID scans a note section or segment for NT_GNU_BUILD_ID.
func noteBuildID(r io.Reader, order binary.ByteOrder) string {
	const maxNotes = 1 << 16 // a note section is small; bound a hostile one
	data, err := io.ReadAll(io.LimitReader(r, maxNotes))
	if err != nil {
		return ""
	}
	for len(data) >= 12 {
		nameSize, descSize, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
		data = data[12:]
		nameEnd, descEnd := align4(uint64(nameSize)), align4(uint64(nameSize))+align4(uint64(descSize))
		if descEnd > uint64(len(data)) {
			return ""
		}
		if id := gnuBuildID(typ, data[:nameSize], data[nameEnd:nameEnd+uint64(descSize)]); id != "" {
			return id
		}
		data = data[descEnd:]
	}
	return ""
}

// gnuBuildID is the hex build id of a note when it is NT_GNU_BUILD_ID of
// owner "GNU", "" otherwise.
func gnuBuildID(typ uint32, name, desc []byte) string {
	if typ != ntGNUBuildID || !bytes.Equal(bytes.TrimRight(name, "\x00"), []byte("GNU")) || len(desc) == 0 {
		return ""
	}
	return hex.EncodeToString(desc)
}

// ntGNUBuildID is the note type of a GNU build id (elf.h NT_GNU_BUILD_ID).
const ntGNUBuildID = 3

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

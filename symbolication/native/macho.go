package native

import (
	"debug/macho"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Mach-O images (Apple platforms: executables, dylibs and the DWARF files
// of dSYM bundles) are named by their LC_UUID, which Sentry's Cocoa SDK
// sends as an image's debug_id; a universal (fat) file holds one image per
// architecture, each with its own UUID.

const (
	machoLoadUUID   = 0x1b // LC_UUID
	machoMagicFatBE = 0xcafebabe
)

// isMachO reports whether a file starts with a Mach-O or universal magic.
func isMachO(magic [4]byte) bool {
	switch binary.BigEndian.Uint32(magic[:]) {
	case macho.Magic32, macho.Magic64, machoMagicFatBE:
		return true
	}
	switch binary.LittleEndian.Uint32(magic[:]) {
	case macho.Magic32, macho.Magic64:
		return true
	}
	return false
}

// machoFiles returns the images of a thin or universal Mach-O file.
func machoFiles(r io.ReaderAt) (files []*macho.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			files, err = nil, fmt.Errorf("malformed Mach-O: %v", p)
		}
	}()
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return nil, err
	}
	if binary.BigEndian.Uint32(magic[:]) == machoMagicFatBE {
		return fatFiles(r)
	}
	f, err := macho.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("Mach-O: %w", err)
	}
	return []*macho.File{f}, nil
}

// fatFiles returns the images of a universal file, one per architecture.
func fatFiles(r io.ReaderAt) ([]*macho.File, error) {
	fat, err := macho.NewFatFile(r)
	if err != nil {
		return nil, fmt.Errorf("universal Mach-O: %w", err)
	}
	files := make([]*macho.File, 0, len(fat.Arches))
	for _, arch := range fat.Arches {
		files = append(files, arch.File)
	}
	return files, nil
}

// machoUUID returns an image's LC_UUID as lower-case hex, "" without one.
func machoUUID(f *macho.File) string {
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 24 && f.ByteOrder.Uint32(raw) == machoLoadUUID {
			return hex.EncodeToString(raw[8:24])
		}
	}
	return ""
}

// machoHasDWARF reports whether an image carries DWARF (a dSYM's DWARF
// file, or an object linked without stripping).
func machoHasDWARF(f *macho.File) bool {
	return f.Section("__debug_info") != nil || f.Section("__zdebug_info") != nil
}

// loadMachO parses the image of r whose UUID is id (the first image when
// id is empty).
func loadMachO(r io.ReaderAt, id string) (img *image, err error) {
	files, err := machoFiles(r)
	if err != nil {
		return nil, err
	}
	f, err := machoImage(files, id)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("malformed Mach-O or DWARF: %v", p)
		}
	}()
	img = &image{syms: machoSymbols(f)}
	if text := f.Segment("__TEXT"); text != nil {
		img.imageVMA = text.Addr
	}
	if img.dwarf, err = machoDWARF(f); err != nil {
		return nil, err
	}
	img.measure()
	return img, nil
}

// machoImage is the image of files with UUID id (the first when id is
// empty).
func machoImage(files []*macho.File, id string) (*macho.File, error) {
	i := slices.IndexFunc(files, func(f *macho.File) bool { return id == "" || machoUUID(f) == id })
	if i < 0 {
		return nil, fmt.Errorf("%w: no architecture with UUID %s", errBuildIDMismatch, id)
	}
	return files[i], nil
}

// machoDWARF flattens an image's DWARF; nil without any.
func machoDWARF(f *macho.File) (*dwarfTables, error) {
	if !machoHasDWARF(f) {
		return nil, nil
	}
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("reading DWARF: %w", err)
	}
	return loadDWARF(d, machoDebugInfoSize(f))
}

// machoDebugInfoSize is the (uncompressed) size of the DWARF entries.
func machoDebugInfoSize(f *macho.File) uint64 {
	if s := f.Section("__debug_info"); s != nil {
		return s.Size
	}
	if s := f.Section("__zdebug_info"); s != nil {
		return 32 * s.Size // compressed: allow for the ratio
	}
	return 0
}

// machoSymbols reads the functions of a Mach-O symbol table: defined
// symbols in __TEXT sections, without their C leading underscore. Mach-O
// symbols have no size: each reaches the next one, the last one the end of
// its section.
func machoSymbols(f *macho.File) symbolTable {
	if f.Symtab == nil {
		return symbolTable{}
	}
	var syms []symbol
	for _, s := range f.Symtab.Syms {
		if sym, ok := machoCodeSymbol(f, s); ok {
			syms = append(syms, sym)
		}
	}
	slices.SortStableFunc(syms, func(a, b symbol) int { return cmpUint64(a.addr, b.addr) })
	syms = slices.CompactFunc(syms, func(a, b symbol) bool { return a.addr == b.addr })
	for i := range syms {
		if i+1 < len(syms) {
			syms[i].size = min(syms[i].size, syms[i+1].addr-syms[i].addr)
		}
		syms[i].name = demangleName(strings.TrimPrefix(syms[i].name, "_"))
	}
	return symbolTable{syms: slices.Clip(syms)}
}

// machoCodeSymbol is a symbol defined in a __TEXT section, sized to the
// end of its section; false for any other (debugging entries, undefined
// or absolute symbols, data).
func machoCodeSymbol(f *macho.File, s macho.Symbol) (symbol, bool) {
	if !inSection(f, s) {
		return symbol{}, false
	}
	sect := f.Sections[s.Sect-1]
	if sect.Seg != "__TEXT" || s.Value < sect.Addr || s.Value >= sect.Addr+sect.Size {
		return symbol{}, false
	}
	return symbol{addr: s.Value, size: sect.Addr + sect.Size - s.Value, name: s.Name}, true
}

// inSection reports whether s is defined in one of f's sections (not a
// debugging entry, an undefined or an absolute symbol).
func inSection(f *macho.File, s macho.Symbol) bool {
	const typeMask, sectType, stabMask = 0x0e, 0x0e, 0xe0 // N_TYPE, N_SECT, N_STAB
	return s.Type&stabMask == 0 && s.Type&typeMask == sectType && s.Sect != 0 && int(s.Sect) <= len(f.Sections)
}

// errNoImageID: a file has no build id or UUID to be found by.
var errNoImageID = errors.New("no GNU build id note or LC_UUID")

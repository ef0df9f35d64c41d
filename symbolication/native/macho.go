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
		fat, err := macho.NewFatFile(r)
		if err != nil {
			return nil, fmt.Errorf("universal Mach-O: %w", err)
		}
		for _, arch := range fat.Arches {
			files = append(files, arch.File)
		}
		return files, nil
	}
	f, err := macho.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("Mach-O: %w", err)
	}
	return []*macho.File{f}, nil
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
	i := slices.IndexFunc(files, func(f *macho.File) bool { return id == "" || machoUUID(f) == id })
	if i < 0 {
		return nil, fmt.Errorf("%w: no architecture with UUID %s", errBuildIDMismatch, id)
	}
	f := files[i]
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("malformed Mach-O or DWARF: %v", p)
		}
	}()
	img = &image{syms: machoSymbols(f)}
	if text := f.Segment("__TEXT"); text != nil {
		img.imageVMA = text.Addr
	}
	if machoHasDWARF(f) {
		d, err := f.DWARF()
		if err != nil {
			return nil, fmt.Errorf("reading DWARF: %w", err)
		}
		var size uint64
		if s := f.Section("__debug_info"); s != nil {
			size = s.Size
		} else if s := f.Section("__zdebug_info"); s != nil {
			size = 32 * s.Size
		}
		if img.dwarf, err = loadDWARF(d, size); err != nil {
			return nil, err
		}
	}
	img.size = 64 + img.syms.bytes()
	if img.dwarf != nil {
		img.size += img.dwarf.bytes()
	}
	return img, nil
}

// machoSymbols reads the functions of a Mach-O symbol table: defined
// symbols in __TEXT sections, without their C leading underscore. Mach-O
// symbols have no size: each reaches the next one, the last one the end of
// its section.
func machoSymbols(f *macho.File) symbolTable {
	if f.Symtab == nil {
		return symbolTable{}
	}
	const typeMask, sectType, stabMask = 0x0e, 0x0e, 0xe0 // N_TYPE, N_SECT, N_STAB
	var syms []symbol
	for _, s := range f.Symtab.Syms {
		if s.Type&stabMask != 0 || s.Type&typeMask != sectType || s.Sect == 0 || int(s.Sect) > len(f.Sections) {
			continue
		}
		sect := f.Sections[s.Sect-1]
		if sect.Seg != "__TEXT" || s.Value < sect.Addr || s.Value >= sect.Addr+sect.Size {
			continue
		}
		syms = append(syms, symbol{addr: s.Value, size: sect.Addr + sect.Size - s.Value, name: s.Name})
	}
	slices.SortStableFunc(syms, func(a, b symbol) int { return cmpUint64(a.addr, b.addr) })
	syms = slices.CompactFunc(syms, func(a, b symbol) bool { return a.addr == b.addr })
	for i := range syms {
		if i+1 < len(syms) && syms[i+1].addr-syms[i].addr < syms[i].size {
			syms[i].size = syms[i+1].addr - syms[i].addr
		}
		syms[i].name = demangleName(strings.TrimPrefix(syms[i].name, "_"))
	}
	return symbolTable{syms: slices.Clip(syms)}
}

// errNoImageID: a file has no build id or UUID to be found by.
var errNoImageID = errors.New("no GNU build id note or LC_UUID")

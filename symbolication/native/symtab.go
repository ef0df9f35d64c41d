package native

import (
	"debug/elf"
	"slices"
)

// symbol is one function of an ELF symbol table.
type symbol struct {
	addr, size uint64
	name       string // demangled
}

// symbolTable is the functions of .symtab and .dynsym sorted by address,
// for images without DWARF (or addresses DWARF does not cover).
type symbolTable struct {
	syms []symbol
}

// newSymbolTable reads the function symbols of both tables; a missing
// table is not an error (stripped files keep only .dynsym).
func newSymbolTable(f *elf.File) symbolTable {
	var syms []symbol
	add := func(list []elf.Symbol) {
		for _, s := range list {
			typ := elf.ST_TYPE(s.Info)
			if typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC || s.Value == 0 || s.Section == elf.SHN_UNDEF {
				continue
			}
			syms = append(syms, symbol{addr: s.Value, size: s.Size, name: s.Name})
		}
	}
	if list, err := f.Symbols(); err == nil {
		add(list)
	}
	if list, err := f.DynamicSymbols(); err == nil {
		add(list)
	}
	// By address; at one address prefer a sized symbol, then the first seen.
	slices.SortStableFunc(syms, func(a, b symbol) int {
		switch {
		case a.addr != b.addr:
			return cmpUint64(a.addr, b.addr)
		case (a.size == 0) != (b.size == 0):
			if a.size != 0 {
				return -1
			}
			return 1
		}
		return 0
	})
	syms = slices.CompactFunc(syms, func(a, b symbol) bool { return a.addr == b.addr })
	names := map[string]string{}
	for i := range syms {
		raw := syms[i].name
		if d, ok := names[raw]; ok {
			syms[i].name = d
			continue
		}
		syms[i].name = demangleName(raw)
		names[raw] = syms[i].name
	}
	return symbolTable{syms: slices.Clip(syms)}
}

// lookup returns the function holding addr: the last symbol at or below
// it, within its size (a symbol without size reaches the next symbol).
func (t symbolTable) lookup(addr uint64) (symbol, bool) {
	i, found := slices.BinarySearchFunc(t.syms, addr, func(s symbol, a uint64) int { return cmpUint64(s.addr, a) })
	if !found {
		if i == 0 {
			return symbol{}, false
		}
		i--
	}
	s := t.syms[i]
	if s.size != 0 && addr-s.addr >= s.size {
		return symbol{}, false
	}
	return s, true
}

func (t symbolTable) bytes() int64 {
	n := int64(cap(t.syms)) * 40
	for _, s := range t.syms {
		n += int64(len(s.name))
	}
	return n
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

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
	if list, err := f.Symbols(); err == nil {
		syms = appendFunctions(syms, list)
	}
	if list, err := f.DynamicSymbols(); err == nil {
		syms = appendFunctions(syms, list)
	}
	// By address; at one address prefer a sized symbol, then the first seen.
	slices.SortStableFunc(syms, compareSymbols)
	syms = slices.CompactFunc(syms, func(a, b symbol) bool { return a.addr == b.addr })
	demangleSymbols(syms)
	return symbolTable{syms: slices.Clip(syms)}
}

// appendFunctions appends the defined functions of an ELF symbol list.
func appendFunctions(syms []symbol, list []elf.Symbol) []symbol {
	for _, s := range list {
		if isDefinedFunction(s) {
			syms = append(syms, symbol{addr: s.Value, size: s.Size, name: s.Name})
		}
	}
	return syms
}

// isDefinedFunction: a function (or GNU indirect function) with an
// address in a section of the file.
func isDefinedFunction(s elf.Symbol) bool {
	typ := elf.ST_TYPE(s.Info)
	return (typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC) && s.Value != 0 && s.Section != elf.SHN_UNDEF
}

// compareSymbols orders by address, a sized symbol first at one address.
func compareSymbols(a, b symbol) int {
	if a.addr != b.addr {
		return cmpUint64(a.addr, b.addr)
	}
	return cmpBool(a.size == 0, b.size == 0)
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// demangleSymbols demangles each distinct name once.
func demangleSymbols(syms []symbol) {
	names := map[string]string{}
	for i := range syms {
		raw := syms[i].name
		d, ok := names[raw]
		if !ok {
			d = demangleName(raw)
			names[raw] = d
		}
		syms[i].name = d
	}
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

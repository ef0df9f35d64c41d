package native

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

// testFunc is a function symbol for writeELF.
type testFunc struct {
	name       string
	addr, size uint64
}

// writeELF writes a minimal x86-64 ELF shared object by the ELF
// specification: one loadable segment at vaddr, a GNU build id note, a
// .text section and a symbol table with funcs; padding bytes of filler
// make it as large as a test needs. Tests that exercise storage, caching
// and the symbol table use it without a compiler.
func writeELF(t testing.TB, buildID string, vaddr uint64, funcs []testFunc, filler int) []byte {
	t.Helper()
	id, err := hex.DecodeString(buildID)
	require.NoError(t, err)
	le := binary.LittleEndian

	var note bytes.Buffer
	_ = binary.Write(&note, le, [3]uint32{4, uint32(len(id)), ntGNUBuildID})
	note.WriteString("GNU\x00")
	note.Write(id)
	for note.Len()%4 != 0 {
		note.WriteByte(0)
	}
	text := make([]byte, 0x100+filler)
	strtab := []byte{0}
	var symtab bytes.Buffer
	symtab.Write(make([]byte, 24)) // the null symbol
	for _, f := range funcs {
		_ = binary.Write(&symtab, le, elf.Sym64{
			Name: uint32(len(strtab)), Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC),
			Shndx: 2, Value: f.addr, Size: f.size,
		})
		strtab = append(strtab, f.name+"\x00"...)
	}
	shstrtab := []byte("\x00.note.gnu.build-id\x00.text\x00.symtab\x00.strtab\x00.shstrtab\x00")
	names := []uint32{0, 1, 20, 26, 34, 42}

	const ehsize, phsize, shsize = 64, 56, 64
	off := uint64(ehsize + 2*phsize)
	noteOff := off
	textOff := noteOff + uint64(note.Len())
	symOff := textOff + uint64(len(text))
	strOff := symOff + uint64(symtab.Len())
	shstrOff := strOff + uint64(len(strtab))
	shOff := shstrOff + uint64(len(shstrtab))

	var b bytes.Buffer
	hdr := elf.Header64{
		Type: uint16(elf.ET_DYN), Machine: uint16(elf.EM_X86_64), Version: 1,
		Phoff: ehsize, Shoff: shOff, Ehsize: ehsize, Phentsize: phsize, Phnum: 2,
		Shentsize: shsize, Shnum: 6, Shstrndx: 5,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS], hdr.Ident[elf.EI_DATA], hdr.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	_ = binary.Write(&b, le, hdr)
	_ = binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X),
		Vaddr: vaddr, Paddr: vaddr, Filesz: symOff, Memsz: symOff, Align: 0x1000})
	_ = binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_NOTE), Flags: uint32(elf.PF_R),
		Off: noteOff, Vaddr: vaddr + noteOff, Filesz: uint64(note.Len()), Memsz: uint64(note.Len()), Align: 4})
	b.Write(note.Bytes())
	b.Write(text)
	b.Write(symtab.Bytes())
	b.Write(strtab)
	b.Write(shstrtab)
	sections := []elf.Section64{
		{},
		{Name: names[1], Type: uint32(elf.SHT_NOTE), Flags: uint64(elf.SHF_ALLOC), Addr: vaddr + noteOff, Off: noteOff, Size: uint64(note.Len()), Addralign: 4},
		{Name: names[2], Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC | elf.SHF_EXECINSTR), Addr: vaddr + textOff, Off: textOff, Size: uint64(len(text)), Addralign: 16},
		{Name: names[3], Type: uint32(elf.SHT_SYMTAB), Off: symOff, Size: uint64(symtab.Len()), Link: 4, Info: 1, Addralign: 8, Entsize: 24},
		{Name: names[4], Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(strtab)), Addralign: 1},
		{Name: names[5], Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstrtab)), Addralign: 1},
	}
	for _, s := range sections {
		_ = binary.Write(&b, le, s)
	}
	return b.Bytes()
}

func TestWriteELF(t *testing.T) {
	data := writeELF(t, "0011223344556677", 0x400000, []testFunc{{"alpha", 0x401000, 0x20}, {"_ZN3foo3barEi", 0x401020, 0x10}}, 0)
	id, err := buildIDOf(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, "0011223344556677", id)
	img, err := loadImage(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, uint64(0x400000), img.imageVMA)
	require.Equal(t, []Frame{{Function: "alpha"}}, img.resolve(0x40101f))
	require.Equal(t, []Frame{{Function: "foo::bar(int)"}}, img.resolve(0x401020))
	require.Empty(t, img.resolve(0x401030), "past the last symbol's size")
	require.Empty(t, img.resolve(0x400fff), "before the first symbol")
}

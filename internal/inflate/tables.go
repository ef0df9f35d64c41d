package inflate

import "math/bits"

// A decode table entry is a uint32 that carries everything a symbol's
// decoding needs, so that one look-up decodes a literal or a length with
// its extra bits:
//
//	bits 0-7    bits to consume: the codeword's length at this level plus
//	            the symbol's extra bits (for a subtable pointer: the
//	            primary table's bits)
//	bits 8-11   the codeword's length at this level (for a subtable
//	            pointer: the subtable's index bits)
//	bit 12      end of block
//	bit 13      subtable pointer
//	bit 14      invalid symbol (or no codeword)
//	bits 16-30  the value: a literal byte, a length or distance base, a
//	            precode symbol, or the subtable's start
//	bit 31      literal
const (
	entryEOB     = 1 << 12
	entrySub     = 1 << 13
	entryInvalid = 1 << 14
	entryLiteral = 1 << 31
	entrySpecial = entryEOB | entrySub | entryInvalid
	valueShift   = 16
	valueMask    = 0x7fff
)

// Primary table sizes: a literal/length codeword of up to litBits bits,
// which covers nearly every symbol of real streams, and a distance of up to
// distBits bits is decoded by one look-up; longer codewords take a second
// look-up in a subtable.
const (
	litBits  = 11
	distBits = 8
	preBits  = 7 // the precode's codewords are at most 7 bits: no subtables

	maxCodeLen  = 15
	numLitSyms  = 288
	numDistSyms = 32
	numPreSyms  = 19
	maxLitSyms  = 286 // HLIT + 257 may not name more
	maxDistSyms = 30  // HDIST + 1 may not name more
)

// Table sizes: the primary table plus the largest total of subtables a
// complete code can need. Every subtable belongs to a group of at least two
// codewords sharing a primary prefix, and holds at most 2^(15-primary)
// entries, so 288 literal/length symbols need at most 144 × 16 subtable
// entries and 32 distance symbols 16 × 128.
const (
	litTableSize  = 1<<litBits + numLitSyms/2<<(maxCodeLen-litBits)
	distTableSize = 1<<distBits + numDistSyms/2<<(maxCodeLen-distBits)
	preTableSize  = 1 << preBits
)

// The decode tables, as arrays: an index masked to the primary bits needs
// no bounds check.
type (
	litTable  [litTableSize]uint32
	distTable [distTableSize]uint32
)

// litBase is the entry of each literal/length symbol before its codeword
// length is added: literals 0-255, the end of block, lengths 3-258 with
// their extra bits (RFC 1951 3.2.5), and the two symbols 286 and 287 that
// the fixed code assigns but no stream may use.
var litBase = func() (b [numLitSyms]uint32) {
	for s := range 256 {
		b[s] = entryLiteral | uint32(s)<<valueShift
	}
	b[256] = entryEOB
	base, extra := uint32(3), uint32(0)
	for s := 257; s < 285; s++ {
		if s >= 265 && (s-261)%4 == 0 {
			extra++
		}
		b[s] = base<<valueShift | extra
		base += 1 << extra
	}
	b[285] = 258 << valueShift
	b[286], b[287] = entryInvalid, entryInvalid
	return b
}()

// distBase is the entry of each distance symbol: distances 1-32768 with
// their extra bits, and the symbols 30 and 31 no stream may use.
var distBase = func() (b [numDistSyms]uint32) {
	base, extra := uint32(1), uint32(0)
	for s := range 30 {
		if s >= 4 && s%2 == 0 {
			extra++
		}
		b[s] = base<<valueShift | extra
		base += 1 << extra
	}
	b[30], b[31] = entryInvalid, entryInvalid
	return b
}()

// preBase is the entry of each precode symbol: its value, whose repeat
// bits the decoder reads itself.
var preBase = func() (b [numPreSyms]uint32) {
	for s := range numPreSyms {
		b[s] = uint32(s) << valueShift
	}
	return b
}()

// buildTable fills table with the canonical Huffman code of lengths (RFC
// 1951 3.2.2), bases giving each symbol's entry. It reports false for a
// code that is over-subscribed, or incomplete other than a single codeword
// of one bit (which zlib writes and compress/flate accepts); an empty code
// gives a table of invalid entries, which fails at its first use. sorted
// is scratch of at least len(lengths).
func buildTable(table []uint32, lengths []uint8, bases []uint32, primary uint, sorted []uint16) bool {
	var count [maxCodeLen + 1]int
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	maxLen, used := codeSpace(&count)
	if used != 1<<maxLen || maxLen <= 1 {
		// Empty, incomplete or a single codeword: the entries no codeword
		// fills are invalid.
		fillInvalid(table[:1<<primary])
	}
	if !acceptedCode(maxLen, used) {
		return false
	}
	n := sortSymbols(lengths, &count, sorted)
	return fillCodes(table, lengths, bases, primary, sorted[:n])
}

// acceptedCode reports whether compress/flate accepts a code whose longest
// codeword has maxLen bits and uses used of that length's code space: a
// complete code, an empty one, or one codeword of one bit.
func acceptedCode(maxLen, used int) bool {
	return used == 1<<maxLen || maxLen == 0 || (used == 1 && maxLen == 1)
}

// codeSpace returns the longest codeword length and how much of the code
// space of that length the codewords use.
func codeSpace(count *[maxCodeLen + 1]int) (maxLen, used int) {
	for l := 1; l <= maxCodeLen; l++ {
		used <<= 1
		used += count[l]
		if count[l] != 0 {
			maxLen = l
		}
	}
	return maxLen, used >> (maxCodeLen - maxLen)
}

func fillInvalid(t []uint32) {
	for i := range t {
		t[i] = entryInvalid
	}
}

// sortSymbols writes the symbols with a codeword into sorted in canonical
// order (by length, then symbol) and returns how many there are.
func sortSymbols(lengths []uint8, count *[maxCodeLen + 1]int, sorted []uint16) int {
	var offs [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	for s, l := range lengths {
		if l != 0 {
			sorted[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	return offs[maxCodeLen]
}

// fillCodes writes the entries of the sorted symbols. Codewords longer than
// primary bits go to a subtable per primary prefix, sized by the longest
// codeword of that prefix: in canonical order the codewords of a prefix
// are consecutive, the longest last.
func fillCodes(table []uint32, lengths []uint8, bases []uint32, primary uint, sorted []uint16) bool {
	code, prevLen := 0, uint(0)
	next := 1 << primary
	subPrefix, subStart, subBits := -1, 0, uint(0)
	for i, s := range sorted {
		l := uint(lengths[s])
		code <<= l - prevLen
		prevLen = l
		rev := int(bits.Reverse16(uint16(code)) >> (16 - l))
		code++
		if l <= primary {
			e := bases[s] + uint32(l) + uint32(l)<<8
			for j := rev; j < 1<<primary; j += 1 << l {
				table[j] = e
			}
			continue
		}
		if prefix := rev & (1<<primary - 1); prefix != subPrefix {
			subPrefix, subStart = prefix, next
			subBits = groupLen(lengths, sorted[i:], code-1, l, primary) - primary
			next += 1 << subBits
			if next > len(table) {
				return false
			}
			table[prefix] = entrySub | uint32(subStart)<<valueShift | uint32(subBits)<<8 | uint32(primary)
		}
		rl := l - primary
		e := bases[s] + uint32(rl) + uint32(rl)<<8
		for j := rev >> primary; j < 1<<subBits; j += 1 << rl {
			table[subStart+j] = e
		}
	}
	return true
}

// groupLen is the length of the last codeword sharing the primary prefix
// of code (of length l), the first of the group in sorted.
func groupLen(lengths []uint8, sorted []uint16, code int, l, primary uint) uint {
	top := code >> (l - primary)
	last := l
	for _, s := range sorted[1:] {
		nl := uint(lengths[s])
		code = (code + 1) << (nl - l)
		l = nl
		if code>>(l-primary) != top {
			break
		}
		last = l
	}
	return last
}

package profilesin

import "math/bits"

// hashIndex finds a dictionary table's entries by a 64-bit hash of their
// content: open addressing with linear probing over a power-of-two array
// kept at most half full. It holds only hashes and entry indices; the caller
// confirms a candidate by comparing the entry itself, so contents that
// share a hash are simply two slots. Compared with a Go map keyed by the
// content it hashes each key once, in the caller's own way (two strings and
// two integers combined, not a generic struct hash), and stores no key copy.
//
// A lookup (find) walks the slots from h's with the caller's comparison
// until it finds the entry or an empty slot; put then fills that slot:
//
//	i, p, ok := x.find(h, func(i int32) bool { return table[i] == key })
//	if !ok {
//		x.put(p, h, appended)
//	}
type hashIndex struct {
	slots []hashSlot
	used  int
}

type hashSlot struct {
	hash uint64
	idx  int32 // the entry's index + 1; 0 marks an empty slot
}

// minHashSlots is the size of an empty index: small items stay in a few
// cache lines.
const minHashSlots = 16

// reset empties x, keeping its memory.
func (x *hashIndex) reset() {
	if len(x.slots) == 0 {
		x.slots = make([]hashSlot, minHashSlots)
	} else if x.used > 0 {
		clear(x.slots)
	}
	x.used = 0
}

// reserve makes room for n more entries without growing on the way.
func (x *hashIndex) reserve(n int) {
	if 2*(x.used+n) > len(x.slots) {
		x.rehash(2 * (x.used + n))
	}
}

// rehash moves the entries to an array of at least n slots.
func (x *hashIndex) rehash(n int) {
	size := max(minHashSlots, 1<<bits.Len(uint(n-1)))
	old := x.slots
	x.slots = make([]hashSlot, size)
	mask := uint64(size - 1)
	for _, s := range old {
		if s.idx == 0 {
			continue
		}
		p := s.hash & mask
		for x.slots[p].idx != 0 {
			p = (p + 1) & mask
		}
		x.slots[p] = s
	}
}

// find is the entry under h that same confirms, or, when there is none,
// the empty slot where the walk ended (for put). It is small enough to be
// inlined, and with it the caller's comparison.
func (x *hashIndex) find(h uint64, same func(i int32) bool) (i int32, p uint64, ok bool) {
	mask := uint64(len(x.slots) - 1)
	for p = h & mask; x.slots[p].idx != 0; p = (p + 1) & mask {
		if e := x.slots[p]; e.hash == h && same(e.idx-1) {
			return e.idx - 1, p, true
		}
	}
	return 0, p, false
}

// put records entry i under h in the empty slot p, where the lookup of h
// ended.
func (x *hashIndex) put(p, h uint64, i int32) {
	x.slots[p] = hashSlot{hash: h, idx: i + 1}
	x.used++
	if 2*x.used > len(x.slots) {
		x.rehash(2 * x.used)
	}
}

// mixHash folds b into the hash a (the multiply-and-fold step of wyhash):
// each bit of either input moves about half of the output's bits. b is
// folded with key, the builder's secret, not with a constant: with a
// constant, the one b equal to it made the product zero and so dropped a,
// and a client could send any number of frames at that instruction
// address, differing in their line, that all hashed alike.
func mixHash(a, b, key uint64) uint64 {
	hi, lo := bits.Mul64(a^0xa0761d6478bd642f, b^key)
	return hi ^ lo
}

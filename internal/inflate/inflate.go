// Package inflate decodes DEFLATE (RFC 1951) and gzip (RFC 1952) streams
// held whole in memory into one output buffer.
//
// compress/flate and klauspost/compress stream: they decode into a 32 KiB
// window and copy out of it, so every byte is written twice and every match
// is copied within a ring. Here the output buffer is the window: a match is
// copied from earlier output, 8 bytes at a time when its distance allows;
// bits are read from a 64-bit buffer refilled 8 bytes at a time; one table
// look-up decodes a literal or a length with its extra bits. A fast loop
// runs while the input and the output are far from their ends, a careful
// loop near them. The output never passes the limit the caller gives, and
// memory and work stay linear in the input plus the output.
package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is returned when the output would pass the caller's limit;
// the output returned with it holds the first limit bytes.
var ErrTooLarge = errors.New("inflate: output exceeds the limit")

// CorruptError reports a DEFLATE stream that breaks RFC 1951.
type CorruptError struct {
	Offset int64 // offset of the input byte where it was found
	Msg    string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("flate: corrupt input before offset %d: %s", e.Offset, e.Msg)
}

// Decoder holds the decode tables. Its zero value is ready; a Decoder is
// large (about 40 KiB) and meant to be reused. It is not safe for
// concurrent use.
type Decoder struct {
	lit   litTable
	dist  distTable
	pre   [preTableSize]uint32
	fixed *fixedTables

	lens   [maxLitSyms + maxDistSyms]uint8
	sorted [numLitSyms]uint16
}

// fixedTables are the tables of the fixed code (RFC 1951 3.2.6), built on
// first use.
type fixedTables struct {
	lit  litTable
	dist distTable
}

// fastOutSlack is what the fast loop needs past its write position: the
// longest match plus the 7 bytes an 8-byte copy may write past its end,
// plus up to two literals decoded before it.
const fastOutSlack = 258 + 8 + 8

// stream is one DEFLATE stream being decoded: the input, the bit buffer
// and the output (whose whole length is the window; out[:op] is written).
type stream struct {
	in   []byte
	base int64 // offset of in[0] in the caller's input, for errors
	ip   int   // next input byte to load
	bb   uint64
	nb   uint // valid bits in bb
	over int  // zero bytes loaded past the end of in

	out   []byte
	op    int
	start int // where this stream's output starts: no match reaches before it
	limit int
}

// Inflate decodes the raw DEFLATE stream in src, appending to dst, and
// returns the output and how many bytes of src the stream took. At most
// limit bytes are appended. On error the output holds what was decoded
// before it: ErrTooLarge, io.ErrUnexpectedEOF for a stream that ends early,
// a *CorruptError.
func (d *Decoder) Inflate(dst, src []byte, limit int) ([]byte, int, error) {
	s := stream{in: src, out: dst[:cap(dst)], op: len(dst), start: len(dst), limit: len(dst) + limit}
	err := d.inflate(&s)
	return s.out[:s.op], s.ip, err
}

func (d *Decoder) inflate(s *stream) error {
	for {
		s.refillSlow()
		if s.truncated(3) {
			return io.ErrUnexpectedEOF
		}
		final, kind := s.bb&1, s.bb>>1&3
		s.consume(3)
		if err := d.block(s, kind); err != nil {
			return err
		}
		if final == 1 {
			s.alignToByte()
			return nil
		}
	}
}

// block decodes a block of kind (the BTYPE of RFC 1951 3.2.3).
func (d *Decoder) block(s *stream, kind uint64) error {
	switch kind {
	case 0:
		return s.stored()
	case 1:
		f := d.fixedCode()
		return s.huffmanBlock(&f.lit, &f.dist)
	case 2:
		if err := d.readDynamic(s); err != nil {
			return err
		}
		return s.huffmanBlock(&d.lit, &d.dist)
	}
	return s.corrupt("reserved block type")
}

func (d *Decoder) fixedCode() *fixedTables {
	if d.fixed != nil {
		return d.fixed
	}
	f := new(fixedTables)
	lit, dist := fixedLengths()
	buildTable(f.lit[:], lit[:], litBase[:], litBits, d.sorted[:])
	buildTable(f.dist[:], dist[:], distBase[:], distBits, d.sorted[:])
	d.fixed = f
	return f
}

// fixedLengths are the codeword lengths of the fixed code.
func fixedLengths() (lit [numLitSyms]uint8, dist [numDistSyms]uint8) {
	for s := range lit {
		switch {
		case s < 144, s >= 280:
			lit[s] = 8
		case s < 256:
			lit[s] = 9
		default:
			lit[s] = 7
		}
	}
	for s := range dist {
		dist[s] = 5
	}
	return lit, dist
}

// precodeOrder is the order of the precode's lengths (RFC 1951 3.2.7).
var precodeOrder = [numPreSyms]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// readDynamic reads a dynamic block's header and builds its tables.
func (d *Decoder) readDynamic(s *stream) error {
	nlit, ndist, err := d.readCounts(s)
	if err != nil {
		return err
	}
	if err := d.readLengths(s, d.lens[:nlit+ndist]); err != nil {
		return err
	}
	if !buildTable(d.lit[:], d.lens[:nlit], litBase[:], litBits, d.sorted[:]) ||
		!buildTable(d.dist[:], d.lens[nlit:nlit+ndist], distBase[:], distBits, d.sorted[:]) {
		return s.corrupt("invalid literal/length or distance code")
	}
	return nil
}

// readCounts reads how many literal/length and distance lengths a dynamic
// block has, then its precode.
func (d *Decoder) readCounts(s *stream) (nlit, ndist int, err error) {
	s.refillSlow()
	if s.truncated(14) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	nlit, ndist, npre := int(s.bb&31)+257, int(s.bb>>5&31)+1, int(s.bb>>10&15)+4
	s.consume(14)
	if nlit > maxLitSyms || ndist > maxDistSyms {
		return 0, 0, s.corrupt("too many literal/length or distance codes")
	}
	return nlit, ndist, d.readPrecode(s, npre)
}

// readPrecode reads the npre lengths of the precode and builds its table.
func (d *Decoder) readPrecode(s *stream, npre int) error {
	var lens [numPreSyms]uint8
	for i := range npre {
		s.refillSlow()
		if s.truncated(3) {
			return io.ErrUnexpectedEOF
		}
		lens[precodeOrder[i]] = uint8(s.bb & 7)
		s.consume(3)
	}
	if !buildTable(d.pre[:], lens[:], preBase[:], preBits, d.sorted[:]) {
		return s.corrupt("invalid code lengths code")
	}
	return nil
}

// readLengths reads the code lengths of a dynamic block with the precode;
// a run may cross from the literal/length lengths into the distance ones.
func (d *Decoder) readLengths(s *stream, lens []uint8) error {
	for i := 0; i < len(lens); {
		s.refillSlow()
		e := d.pre[s.bb&(1<<preBits-1)]
		n := uint(e & 0xff)
		if e&entryInvalid != 0 {
			return s.badSymbol(n)
		}
		s.consume(n)
		sym := e >> valueShift & valueMask
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		rep, fill, err := s.repeat(sym, lens, i)
		if err != nil {
			return err
		}
		for range rep {
			lens[i] = fill
			i++
		}
	}
	if s.truncated(0) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// repeat reads the run of precode symbol sym (16, 17 or 18) at lens[i].
func (s *stream) repeat(sym uint32, lens []uint8, i int) (int, uint8, error) {
	var rep int
	var fill uint8
	switch sym {
	case 16:
		if i == 0 {
			return 0, 0, s.corrupt("repeat of no previous length")
		}
		rep, fill = 3+int(s.bb&3), lens[i-1]
		s.consume(2)
	case 17:
		rep = 3 + int(s.bb&7)
		s.consume(3)
	default:
		rep = 11 + int(s.bb&127)
		s.consume(7)
	}
	if s.truncated(0) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	if i+rep > len(lens) {
		return 0, 0, s.corrupt("code lengths run past their count")
	}
	return rep, fill, nil
}

// stored copies a stored block (RFC 1951 3.2.4).
func (s *stream) stored() error {
	s.alignToByte()
	if s.over > 0 || len(s.in)-s.ip < 4 {
		return io.ErrUnexpectedEOF
	}
	n := int(binary.LittleEndian.Uint16(s.in[s.ip:]))
	if uint16(n) != ^binary.LittleEndian.Uint16(s.in[s.ip+2:]) {
		return s.corrupt("stored block length does not match its complement")
	}
	s.ip += 4
	return s.copyStored(n)
}

// copyStored copies a stored block's n bytes, or as many as the input and
// the limit hold.
func (s *stream) copyStored(n int) error {
	avail := min(n, len(s.in)-s.ip)
	err := s.reserve(avail)
	if err != nil {
		avail = s.limit - s.op
	}
	s.op += copy(s.out[s.op:], s.in[s.ip:s.ip+avail])
	s.ip += avail
	if err == nil && avail < n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// huffmanBlock decodes a block's symbols up to its end: the fast loop while
// it can run, one careful step when it cannot.
func (s *stream) huffmanBlock(lit *litTable, dist *distTable) error {
	for {
		done, err := s.fastLoop(lit, dist)
		if !done && err == nil {
			done, err = s.slowStep(lit, dist)
		}
		if done || err != nil {
			return err
		}
	}
}

// consume drops n bits.
func (s *stream) consume(n uint) {
	s.bb >>= n & 63
	s.nb -= n
}

// refillSlow fills the bit buffer to at least 57 bits a byte at a time,
// with zero bytes past the end of the input (counted in over, so that
// truncated can tell whether any was consumed).
func (s *stream) refillSlow() {
	for s.nb <= 56 {
		if s.ip < len(s.in) {
			s.bb |= uint64(s.in[s.ip]) << s.nb
			s.ip++
		} else {
			s.over++
		}
		s.nb += 8
	}
}

// truncated reports whether taking n more bits would take bits past the end
// of the input.
func (s *stream) truncated(n uint) bool {
	return s.over > 0 && s.nb < uint(8*s.over)+n
}

// alignToByte drops the bits up to the next byte boundary and gives back
// the whole bytes the bit buffer holds.
func (s *stream) alignToByte() {
	s.nb -= s.nb & 7
	back := int(s.nb >> 3)
	fake := min(back, s.over)
	s.over -= fake
	s.ip -= back - fake
	s.bb, s.nb = 0, 0
}

// offset is the input offset of the next unread bit's byte, for errors.
func (s *stream) offset() int64 {
	return s.base + int64(s.ip) - int64(s.nb>>3) + int64(s.over)
}

func (s *stream) corrupt(msg string) error {
	return &CorruptError{Offset: s.offset(), Msg: msg}
}

// badSymbol is the error for an invalid table entry taking n bits: a
// stream that ended (its zero padding decoded) is truncated, not corrupt.
func (s *stream) badSymbol(n uint) error {
	if s.truncated(n) {
		return io.ErrUnexpectedEOF
	}
	return s.corrupt("invalid symbol")
}

// reserve makes room for n more output bytes: ErrTooLarge past the limit,
// else the output grows (doubling, so that growth copies at most the output
// once over) when it must.
func (s *stream) reserve(n int) error {
	need := s.op + n
	if need > s.limit {
		s.growTo(s.limit)
		return ErrTooLarge
	}
	if need > len(s.out) {
		s.growTo(min(s.limit, max(need, 2*len(s.out), 64<<10)))
	}
	return nil
}

// growTo gives the output at least size bytes of room.
func (s *stream) growTo(size int) {
	if size <= len(s.out) {
		return
	}
	grown := make([]byte, size)
	copy(grown, s.out[:s.op])
	s.out = grown
}

// keepRoom grows a nearly full output ahead of need, while the limit
// allows, so that the fast loop can run again.
func (s *stream) keepRoom() {
	if len(s.out)-s.op < fastOutSlack && len(s.out) < s.limit {
		s.growTo(min(s.limit, max(s.op+fastOutSlack, 2*len(s.out), 64<<10)))
	}
}

package inflate

import (
	"encoding/binary"
	"io"
)

// fastLoop decodes symbols while at least 8 input bytes remain unread and
// the output has fastOutSlack bytes of room before its end and the limit:
// each iteration refills the bit buffer once from an 8-byte load (no
// per-byte checks), which leaves at least 56 bits, enough for up to three
// literals or a length and its extra bits; a second refill before the
// distance. It reports done at the end of the block, and false when it
// must hand over to slowStep.
//
// One function on purpose: the hot loop keeps its state (the bit buffer,
// both positions) in registers across the literal, length and copy steps;
// a call between them would spill it on every symbol. (The split itself
// was not measured; the decoder against klauspost's is in BENCHMARKS.md,
// session 9.)
//
//gocyclo:ignore
func (s *stream) fastLoop(lit *litTable, dist *distTable) (bool, error) {
	in, out := s.in, s.out
	ip, op, bb, nb, start := s.ip, s.op, s.bb, s.nb, s.start
	// Two refills of 8 bytes per iteration, the first advancing up to 7.
	inEnd := len(in) - 15
	outEnd := min(len(out), s.limit) - fastOutSlack
	done := false
	var err error
	for ip <= inEnd && op <= outEnd {
		bb |= binary.LittleEndian.Uint64(in[ip:]) << (nb & 63)
		ip += int((63 - nb) >> 3)
		nb |= 56

		e := lit[bb&(1<<litBits-1)]
		if int32(e) < 0 {
			bb >>= e & 63
			nb -= uint(e & 0xff)
			out[op] = byte(e >> valueShift)
			op++
			e = lit[bb&(1<<litBits-1)]
			if int32(e) < 0 {
				bb >>= e & 63
				nb -= uint(e & 0xff)
				out[op] = byte(e >> valueShift)
				op++
				e = lit[bb&(1<<litBits-1)]
				if int32(e) < 0 {
					bb >>= e & 63
					nb -= uint(e & 0xff)
					out[op] = byte(e >> valueShift)
					op++
					continue
				}
			}
		}
		if e&entrySpecial != 0 {
			if e&entrySub == 0 {
				done = e&entryEOB != 0
				if done {
					bb >>= e & 63
					nb -= uint(e & 0xff)
				} else {
					err = errInvalidSymbol
				}
				break
			}
			bb >>= e & 63
			nb -= uint(e & 0xff)
			e = lit[e>>valueShift&valueMask+uint32(bb&(1<<(e>>8&15)-1))]
			if int32(e) < 0 {
				bb >>= e & 63
				nb -= uint(e & 0xff)
				out[op] = byte(e >> valueShift)
				op++
				continue
			}
			if e&entrySpecial != 0 {
				done = e&entryEOB != 0
				if done {
					bb >>= e & 63
					nb -= uint(e & 0xff)
				} else {
					err = errInvalidSymbol
				}
				break
			}
		}
		// A length: its base plus the extra bits after its codeword.
		saved := bb
		n := e & 0xff
		bb >>= n & 63
		nb -= uint(n)
		length := int(e>>valueShift&valueMask) + int(saved&(1<<(n&63)-1)>>(e>>8&15))

		bb |= binary.LittleEndian.Uint64(in[ip:]) << (nb & 63)
		ip += int((63 - nb) >> 3)
		nb |= 56

		e = dist[bb&(1<<distBits-1)]
		if e&entrySpecial != 0 {
			if e&entrySub == 0 {
				err = errInvalidSymbol
				break
			}
			bb >>= e & 63
			nb -= uint(e & 0xff)
			e = dist[e>>valueShift&valueMask+uint32(bb&(1<<(e>>8&15)-1))]
			if e&entrySpecial != 0 {
				err = errInvalidSymbol
				break
			}
		}
		saved = bb
		n = e & 0xff
		bb >>= n & 63
		nb -= uint(n)
		d := int(e>>valueShift&valueMask) + int(saved&(1<<(n&63)-1)>>(e>>8&15))
		if d > op-start {
			err = errFarDistance
			break
		}

		src := op - d
		end := op + length
		switch {
		case d >= length && length > 32:
			copy(out[op:end], out[src:src+length])
		case d >= 8:
			// Each 8-byte load reads output at least 8 bytes behind the
			// store, written already: overlapping matches copy right.
			for op < end {
				binary.LittleEndian.PutUint64(out[op:], binary.LittleEndian.Uint64(out[src:]))
				op += 8
				src += 8
			}
		case d == 1:
			v := uint64(out[src]) * 0x0101010101010101
			for op < end {
				binary.LittleEndian.PutUint64(out[op:], v)
				op += 8
			}
		default:
			for ; op < end; op++ {
				out[op] = out[op-d]
			}
		}
		op = end
	}
	s.ip, s.op, s.bb, s.nb = ip, op, bb, nb
	if err != nil {
		return false, s.corrupt(err.Error())
	}
	return done, nil
}

type loopError string

func (e loopError) Error() string { return string(e) }

const (
	errInvalidSymbol loopError = "invalid symbol"
	errFarDistance   loopError = "distance reaches before the start of the output"
)

// slowStep decodes one symbol with every check: the input may end (its
// refill pads with zeros and counts them), the output may need to grow or
// reach the limit.
func (s *stream) slowStep(lit *litTable, dist *distTable) (bool, error) {
	s.refillSlow()
	e, n, length := lookup(lit[:], s.bb, litBits)
	if err := s.take(e, n); err != nil {
		return false, err
	}
	switch {
	case int32(e) < 0:
		if err := s.reserve(1); err != nil {
			return false, err
		}
		s.out[s.op] = byte(e >> valueShift)
		s.op++
		s.keepRoom()
		return false, nil
	case e&entryEOB != 0:
		return true, nil
	}
	return false, s.slowMatch(dist, length)
}

// slowMatch reads a match's distance and copies it, byte by byte.
func (s *stream) slowMatch(dist *distTable, length int) error {
	s.refillSlow()
	e, n, d := lookup(dist[:], s.bb, distBits)
	if err := s.take(e, n); err != nil {
		return err
	}
	if d > s.op-s.start {
		return s.corrupt(string(errFarDistance))
	}
	err := s.reserve(length)
	if err != nil {
		length = s.limit - s.op
	}
	out := s.out
	for i := s.op; i < s.op+length; i++ {
		out[i] = out[i-d]
	}
	s.op += length
	s.keepRoom()
	return err
}

// take consumes the n bits of entry e, unless e is invalid or the bits
// run past the end of the input.
func (s *stream) take(e uint32, n uint) error {
	if e&entryInvalid != 0 {
		return s.badSymbol(n)
	}
	if s.truncated(n) {
		return io.ErrUnexpectedEOF
	}
	s.consume(n)
	return nil
}

// lookup decodes the entry at the front of bb: one look-up, or two through
// a subtable. It returns the entry, the bits it takes (codewords and extra
// bits) and its value with the extra bits added.
func lookup(table []uint32, bb uint64, primary uint) (e uint32, n uint, v int) {
	e = table[bb&(1<<primary-1)]
	skip := uint(0)
	if e&entrySub != 0 {
		bb >>= primary
		skip = primary
		e = table[e>>valueShift&valueMask+uint32(bb&(1<<(e>>8&15)-1))]
	}
	n = uint(e & 0xff)
	v = int(e>>valueShift&valueMask) + int(bb&(1<<(n&63)-1)>>(e>>8&15))
	return e, n + skip, v
}

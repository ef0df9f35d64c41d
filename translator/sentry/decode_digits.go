package sentry

import (
	"encoding/binary"
	"math/bits"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/swar"
)

// Reading the digits of the numbers that fill a payload (the stacks' frame
// indices, the samples' stack ids and timestamps) eight bytes at a time:
// see translator/internal/swar.

// digitRun returns the value and the count (0 to 8) of the ASCII digits
// at the start of the eight bytes at data[i:]; 8 means the run may go on.
// It needs i+8 <= len(data).
func digitRun(data []byte, i int) (v uint64, n int) {
	w := binary.LittleEndian.Uint64(data[i:])
	n = bits.TrailingZeros64(swar.NonDigits(w)) / 8
	if n == 0 {
		return 0, 0
	}
	return swar.DigitsValue(w, n), n
}

// compactIndex reads a stack id at data[i:]: up to seven digits without a
// leading zero in one word read, longer ones through fastIndex. What
// follows it is left to the caller, which takes only ',' or '}'.
func compactIndex(data []byte, i int) (v int64, end int, ok bool) {
	if i+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[i:])
		n := bits.TrailingZeros64(swar.NonDigits(w)) / 8
		if n > 0 && n < 8 && (n == 1 || data[i] != '0') {
			return int64(swar.DigitsValue(w, n)), i + n, true
		}
	}
	return fastIndex(data, i)
}

// shortDigitsValue is digitsValue for n (1 to 4) digits in a 32-bit word.
func shortDigitsValue(w uint32, n int) uint32 {
	// The mask (a no-op for n from 1 to 4) spares the compiler's guard of
	// a shift by 32 or more.
	d := (w - '0'*0x01010101) << ((32 - 8*uint(n)) & 31)
	d = (d*10 + d>>8) & 0x00ff00ff
	return (d*100 + d>>16) & 0xffff
}

// digits reads at most limit (≤ 18) ASCII digits at data[i:]: their value
// and where they end.
func digits(data []byte, i, limit int) (v int64, end int) {
	j := i
	if i+8 <= len(data) {
		u, n := digitRun(data, i)
		if n < 8 && n <= limit {
			return int64(u), i + n
		}
		if limit >= 8 {
			v, j = int64(u), i+8
		}
	}
	for j < len(data) && j-i < limit && data[j]-'0' <= 9 {
		v = v*10 + int64(data[j]-'0')
		j++
	}
	return v, j
}

// frameIndexRun appends the compact frame indices of a stack ("12,7,1819]")
// at data[i:], 64 bytes at a time: a bitmap of the bytes that are no digit
// gives the end of every index in them at once, so that reading an index
// does not wait on finding where the one before it ends. It stops at the
// stack's ']' (done, next past it) or at anything else (an empty stack, an
// index of eight digits or more, a leading zero, whitespace, the
// payload's first or last bytes), next then being the start of the first
// index it did not read.
func frameIndexRun(data []byte, i int, indices []int64) (out []int64, next int, done bool) {
	start := i
	for base := i; base >= windowBefore && base+windowAfter <= len(data); base += 64 {
		// The window's bytes seen through an array, from 8 bytes before
		// the 64 read to 64 after them: every index and the word read
		// for it then fall inside, which the compiler can tell, and the
		// loop below checks no bounds.
		win := (*[windowBefore + windowAfter]byte)(data[base-windowBefore:])
		// Room is made once for the window's indices, so that the
		// appends below never grow the slice (stacks leaves this room
		// past the estimated indices).
		if cap(indices)-len(indices) < windowIndices {
			indices = append(make([]int64, 0, 2*cap(indices)+2*windowIndices), indices...)
		}
		// s: where the index being read starts, from the window's start
		// (below windowBefore when it began in the window before).
		s := start - base + windowBefore
		for m := nonDigitBits(win); m != 0; m &= m - 1 {
			n := windowBefore + bits.TrailingZeros64(m) - s
			if uint(n-1) > 6 {
				return indices, base - windowBefore + s, false
			}
			// One word holds the index and the byte after it (n is at
			// most 7); s is at least 1 here.
			w := binary.LittleEndian.Uint64(win[s&127:])
			c := byte(w >> ((8 * uint(n)) & 63))
			if (c != ',' && c != ']') || (n > 1 && byte(w) == '0') {
				return indices, base - windowBefore + s, false
			}
			var v uint64
			if n <= 4 {
				// Frame indices are mostly below 10,000: two pairing
				// steps in 32 bits instead of three.
				v = uint64(shortDigitsValue(uint32(w), n))
			} else {
				v = swar.DigitsValue(w, n)
			}
			indices = append(indices, int64(v))
			s += n + 1
			if c == ']' {
				return indices, base - windowBefore + s, true
			}
		}
		start = base - windowBefore + s
	}
	return indices, start, false
}

// The window of frameIndexRun: the 64 bytes read start windowBefore bytes
// into it, and windowAfter bytes follow their start.
const (
	windowBefore = 8
	windowAfter  = 128
	// windowIndices is the most indices a window holds (each ends at a
	// byte that is no digit).
	windowIndices = 32
)

// nonDigitBits sets bit k for each byte win[windowBefore+k] that is no
// digit, k below 64: each word's marks (nonDigits) gathered into a byte by
// one multiplication.
func nonDigitBits(win *[windowBefore + windowAfter]byte) uint64 {
	var m uint64
	for w := range 8 {
		marks := swar.NonDigits(binary.LittleEndian.Uint64(win[windowBefore+8*w:])) >> 7
		m |= (marks * gatherTopBits >> 56) << (8 * w)
	}
	return m
}

// gatherTopBits multiplies the low bit of each byte of a word into bit j
// (for byte j) of its top byte, the other products landing below it.
const gatherTopBits = 0x0102040810204080

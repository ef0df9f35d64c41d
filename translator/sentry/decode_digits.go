package sentry

import (
	"encoding/binary"
	"math/bits"
)

// Reading the digits of the numbers that fill a payload (the stacks' frame
// indices, the samples' stack ids and timestamps) eight bytes at a time:
// a byte-by-byte loop stops at a number's end after a branch the CPU
// mispredicts once per number (their lengths vary), which made it the
// costliest loop of a decode.

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// digitRun returns the value and the count (0 to 8) of the ASCII digits
// at the start of the eight bytes at data[i:]; 8 means the run may go on.
// It needs i+8 <= len(data).
func digitRun(data []byte, i int) (v uint64, n int) {
	w := binary.LittleEndian.Uint64(data[i:])
	// A byte is no digit when it is below '0' (the subtraction borrows
	// into its top bit), above '9' (the addition carries into it) or not
	// ASCII. Borrows and carries only run toward later bytes, so the first
	// marked byte is the first non-digit.
	nonDigit := ((w - '0'*swarOnes) | (w + (0x80-':')*swarOnes) | w) & swarHigh
	n = bits.TrailingZeros64(nonDigit) / 8
	if n == 0 {
		return 0, 0
	}
	// The n digits move to the top bytes, zeros below them, and are
	// combined pairwise: 8 one-digit lanes, 4 two-digit, 2 four-digit.
	d := (w - '0'*swarOnes) << (64 - 8*uint(n))
	d = (d*10 + d>>8) & 0x00ff00ff00ff00ff
	d = (d*100 + d>>16) & 0x0000ffff0000ffff
	d = (d*10000 + d>>32) & 0xffffffff
	return d, n
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

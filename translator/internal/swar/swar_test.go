package swar

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"testing"
)

// TestDigits: the first non-digit and the value of the digits before it,
// for every byte value at every place after a run of digits.
func TestDigits(t *testing.T) {
	for place := range 8 {
		for c := range 256 {
			b := []byte("12345678")
			b[place] = byte(c)
			w := binary.LittleEndian.Uint64(b)
			n := bits.TrailingZeros64(NonDigits(w)) / 8
			want := place
			if '0' <= c && c <= '9' {
				want = 8
			}
			if n != want {
				t.Fatalf("%q: first non-digit at %d, want %d", b, n, want)
			}
			if n == 0 {
				continue
			}
			if v, err := strconv.ParseUint(string(b[:n]), 10, 64); err != nil || DigitsValue(w, n) != v {
				t.Fatalf("%q: DigitsValue(%d) = %d, want %d", b, n, DigitsValue(w, n), v)
			}
		}
	}
}

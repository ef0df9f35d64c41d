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

// TestStringSpecials: the first flagged byte is the first a JSON string
// cannot copy, for every byte value at every place after plain bytes.
func TestStringSpecials(t *testing.T) {
	copies := func(c byte) bool { return c >= ' ' && c < 0x80 && c != '"' && c != '\\' }
	for place := range 8 {
		for c := range 256 {
			b := []byte("abcdefgh")
			b[place] = byte(c)
			m := StringSpecials(binary.LittleEndian.Uint64(b))
			want := 8
			if !copies(byte(c)) {
				want = place
			}
			if got := bits.TrailingZeros64(m) / 8; got != want {
				t.Fatalf("%q: first special at %d, want %d", b, got, want)
			}
		}
	}
}

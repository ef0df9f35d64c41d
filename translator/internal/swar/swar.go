// Package swar classifies the bytes of JSON text eight at a time, in a
// 64-bit word (SIMD within a register): ASCII digits, and the bytes a
// string cannot copy as they are. A byte-by-byte loop stops at a number's
// or a string's end after a branch the CPU mispredicts once per value,
// since their lengths vary, which made it the costliest loop of a
// profile's decode and a fifth of a log container's translation. The
// profile decoder (translator/sentry), the timestamp reader
// (translator/internal/sentrytime) and the signals' JSON reader
// (translator/sentrysignal) read with it.
package swar

// Ones and High are words of eight equal bytes: 0x01 and 0x80.
const (
	Ones = 0x0101010101010101
	High = 0x8080808080808080
)

// NonDigits marks the top bit of each byte of w that is no ASCII digit. A
// byte is no digit when it is below '0' (the subtraction borrows into its
// top bit), above '9' (the addition carries into it) or not ASCII. Borrows
// and carries only run toward later bytes, so the first marked byte (the
// lowest, little-endian) is the first non-digit.
func NonDigits(w uint64) uint64 {
	return ((w - '0'*Ones) | (w + (0x80-':')*Ones) | w) & High
}

// DigitsValue is the value of the first n (1 to 8) bytes of w, digits:
// they move to the top bytes, zeros below them, and are combined
// pairwise: 8 one-digit lanes, 4 two-digit, 2 four-digit.
func DigitsValue(w uint64, n int) uint64 {
	d := (w - '0'*Ones) << (64 - 8*uint(n))
	d = (d*10 + d>>8) & 0x00ff00ff00ff00ff
	d = (d*100 + d>>16) & 0x0000ffff0000ffff
	return (d*10000 + d>>32) & 0xffffffff
}

// StringSpecials has the top bit set of the first byte of w
// (little-endian) that a JSON string cannot copy as it is (a quote, a
// backslash, a control character, or not ASCII), and possibly of later
// ones; 0 when there is none. A byte of v is zero where (v-Ones) &^ v has
// its top bit, exactly for the first (a borrow only runs past a zero
// byte); v = w^(c*Ones) is zero where w holds c; w-' ' has the top bit of
// a byte below ' ' (the bytes before it borrow nothing), and w its own
// where a byte is at or above 0x80.
func StringSpecials(w uint64) uint64 {
	quotes := w ^ ('"' * Ones)
	backslashes := w ^ ('\\' * Ones)
	special := w | (w - ' '*Ones) |
		((quotes - Ones) &^ quotes) |
		((backslashes - Ones) &^ backslashes)
	return special & High
}

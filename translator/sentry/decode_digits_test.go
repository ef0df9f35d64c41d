package sentry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// slowDigits is digits one byte at a time: the reference.
func slowDigits(data []byte, i, limit int) (v int64, end int) {
	j := i
	for j < len(data) && j-i < limit && data[j] >= '0' && data[j] <= '9' {
		v = v*10 + int64(data[j]-'0')
		j++
	}
	return v, j
}

// TestDigits: the word-at-a-time read agrees with the byte loop for every
// length of digit run, what follows it (bytes just below '0', just above
// '9', not ASCII) and room left in the input (fewer than eight bytes sends
// it to the byte loop).
func TestDigits(t *testing.T) {
	runs := []string{"", "0", "7", "12", "999", "1819", "12345", "654321", "1234567", "12345678", "123456789", "1795000000", "123456789012345678", "1234567890123456789"}
	tails := []string{",", "]", "/", ":", "\xff", "\x80", ".5", "e3", "", ",0000000", "]]]]]]]]]"}
	for _, run := range runs {
		for _, tail := range tails {
			for _, limit := range []int{9, 10, 18} {
				data := []byte("[" + run + tail)
				wantV, wantEnd := slowDigits(data, 1, limit)
				gotV, gotEnd := digits(data, 1, limit)
				assert.Equal(t, wantV, gotV, "digits(%q, limit %d)", data, limit)
				assert.Equal(t, wantEnd, gotEnd, "digits(%q, limit %d) end", data, limit)
			}
		}
	}
}

// TestDigitRun names the byte classes at the edges of the digit test.
func TestDigitRun(t *testing.T) {
	tests := []struct {
		word string
		v    uint64
		n    int
	}{
		{"00000000", 0, 8},
		{"99999999", 99999999, 8},
		{"12345678", 12345678, 8},
		{"1/345678", 1, 1},  // '/' is '0'-1
		{"12:45678", 12, 2}, // ':' is '9'+1
		{"123\xb0", 123, 3}, // '0'+0x80: not ASCII
		{"1234\xb9", 1234, 4},
		{"\x00", 0, 0},
		{",1234567", 0, 0},
		{"4\xff\xff", 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			word := []byte(tt.word + strings.Repeat("\x00", 8-len(tt.word)))
			v, n := digitRun(word, 0)
			assert.Equal(t, tt.n, n)
			assert.Equal(t, tt.v, v)
		})
	}
}

func FuzzDigits(f *testing.F) {
	for _, s := range []string{"1819,12,7]", "1795000000.000164}", "12345678901234567890", "0\xb0", "9:"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint8) {
		i := int(at)
		if i > len(data) {
			return
		}
		for _, limit := range []int{9, 10, 18} {
			wantV, wantEnd := slowDigits(data, i, limit)
			if gotV, gotEnd := digits(data, i, limit); gotV != wantV || gotEnd != wantEnd {
				t.Fatalf("digits(%q, %d, %d) = %d, %d; want %d, %d", data, i, limit, gotV, gotEnd, wantV, wantEnd)
			}
		}
	})
}

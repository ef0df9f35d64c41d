package sentry

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
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

// sameAsSentrytime fails t when a fast reader of timestamps stops at
// anything but a delimiter or reads another value than sentrytime's exact
// parser reads of the same text; one it does not take is fine.
func sameAsSentrytime(t *testing.T, name string, read func([]byte, int) (int64, int, bool), data []byte) {
	t.Helper()
	got, end, ok := read(data, 0)
	if !ok {
		return
	}
	if !isDelimiter(data[end]) {
		t.Fatalf("%s(%q) stopped at %d, not at a delimiter", name, data, end)
	}
	want, err := sentrytime.ParseSeconds(data[:end])
	if err != nil || want.UnixNano() != got {
		t.Fatalf("%s(%q) = %d; sentrytime reads %d, %v", name, data, got, want, err)
	}
}

// stackIndicesAfter decodes one stack that starts lead bytes into the
// payload (frameIndexRun reads windows of a payload from its eighth byte
// on), the rest of the payload after it.
func stackIndicesAfter(lead int, stack, rest string) ([]int64, error) {
	s := scanner{data: []byte(strings.Repeat(" ", lead) + stack + rest), pos: lead}
	return s.stackIndices(nil)
}

// TestStackIndicesWindows: a stack reads the same wherever its indices
// fall: in the 64-byte windows of frameIndexRun, across their edges, in
// the payload's first bytes (before the windows start) or its last ones,
// where the byte loop reads them.
func TestStackIndicesWindows(t *testing.T) {
	var long []string
	for k := range 200 {
		long = append(long, strconv.Itoa(k*k%100003))
	}
	stacks := []string{
		"[]", "[0]", "[7]", "[1819,12,7,0]", "[" + strings.Join(long, ",") + "]",
		"[1234567,12345678,123456789012]", "[" + strings.Repeat("9", 70) + "]", // eight digits and more: the byte loop
		"[1, 2,3]", "[ 1,2]", "[1,2 ]", // whitespace: the general loop
		"[0,00]", "[00,1]", "[01]", "[1,2,3,4,5,6,7,012]", "[1,-2]", "[1,2.5]", "[1,,2]", "[1,2,]", "[1;2]", // refused
	}
	pads := []int{127, 128, 129, 200}
	for pad := range 80 {
		pads = append(pads, pad)
	}
	for _, stack := range stacks {
		var want []int64
		wantErr := json.Unmarshal([]byte(stack), &want) != nil
		for lead := range 72 {
			for _, pad := range pads {
				got, err := stackIndicesAfter(lead, stack, strings.Repeat(" ", pad))
				if wantErr {
					assert.Error(t, err, "%d bytes + %s + %d bytes", lead, stack, pad)
					continue
				}
				require.NoError(t, err, "%d bytes + %s + %d bytes", lead, stack, pad)
				assert.Equal(t, nilIfEmpty(want), nilIfEmpty(got), "%d bytes + %s + %d bytes", lead, stack, pad)
			}
		}
	}
}

// FuzzStackIndices: what encoding/json reads as a stack of int64, the
// decoder reads the same, wherever it falls in the payload.
func FuzzStackIndices(f *testing.F) {
	for _, s := range []string{"[1819,12,7,0]", "[0,1234567,12345678]", "[1, 2]", "[]", "[00]"} {
		f.Add(s, uint8(0), uint8(70))
		f.Add(s, uint8(9), uint8(200))
	}
	f.Fuzz(func(t *testing.T, stack string, lead, pad uint8) {
		var want []int64
		if json.Unmarshal([]byte(stack), &want) != nil || !strings.HasPrefix(stack, "[") {
			return
		}
		got, err := stackIndicesAfter(int(lead), stack, strings.Repeat(" ", int(pad)))
		if err != nil {
			t.Fatalf("stack %q: %v", stack, err)
		}
		if !reflect.DeepEqual(nilIfEmpty(want), nilIfEmpty(got)) {
			t.Fatalf("stack %q: %v, want %v", stack, got, want)
		}
	})
}

// TestCompactIndex: a stack id reads as fastIndex reads it, whether in one
// word or through fastIndex, wherever it falls in the payload.
func TestCompactIndex(t *testing.T) {
	for _, text := range []string{"0", "7", "1819", "1234567", "12345678", "123456789012345678", "01", "-1", "", "x"} {
		for pad := range 10 {
			data := []byte(text + "," + strings.Repeat("}", pad))
			wantV, wantEnd, wantOK := fastIndex(data, 0)
			gotV, gotEnd, gotOK := compactIndex(data, 0)
			require.Equal(t, wantOK, gotOK, "%q", data)
			if wantOK {
				assert.Equal(t, []int{int(wantV), wantEnd}, []int{int(gotV), gotEnd}, "%q", data)
			}
		}
	}
}

package sentryid

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseHexAddr(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint64
	}{
		{"hex", "0x7fff1000", 0x7fff1000},
		{"upper-case hex", "0X7FFF1000", 0x7fff1000},
		{"decimal", "4096", 4096},
		{"largest", "0xffffffffffffffff", 1<<64 - 1},
		{"empty", "", 0},
		{"not a number", "0xzz", 0},
		// Past 64 bits is no address, not the largest one.
		{"overflow", "0x1ffffffffffffffff", 0},
		{"decimal overflow", "99999999999999999999", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseHexAddr(tt.in))
		})
	}
}

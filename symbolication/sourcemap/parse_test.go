package sourcemap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodeVLQ writes v as base64 VLQ: the inverse of decodeVLQ, for building
// maps in tests.
func encodeVLQ(v int64) string {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	u := v << 1
	if v < 0 {
		u = (-v << 1) | 1
	}
	var b strings.Builder
	for {
		d := u & 0x1f
		u >>= 5
		if u != 0 {
			d |= 0x20
		}
		b.WriteByte(digits[d])
		if u == 0 {
			return b.String()
		}
	}
}

func TestDecodeVLQ(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "A", want: 0},
		{in: "C", want: 1},
		{in: "D", want: -1},
		{in: "gB", want: 16},
		{in: "+/////D", want: 1<<31 - 1},
		{in: "g", wantErr: "cut short"},
		{in: "!", wantErr: "not base64"},
		{in: "gggggggB", wantErr: "longer than 7 digits"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, next, err := decodeVLQ(tt.in, 0)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, len(tt.in), next)
			assert.Equal(t, tt.in, encodeVLQ(tt.want), "round trip")
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		json      string
		wantErr   string
		wantLines int
		wantSegs  int
		wantID    string
	}{
		{name: "two lines", json: `{"version":3,"sources":["a.js"],"names":["f"],"mappings":"AAAA,EAAEA;AACA"}`, wantLines: 2, wantSegs: 3},
		{name: "empty mappings", json: `{"version":3,"sources":[],"names":[],"mappings":""}`, wantLines: 1},
		{name: "one-field segments", json: `{"version":3,"sources":[],"names":[],"mappings":"A,C;;E"}`, wantLines: 3, wantSegs: 3},
		{name: "debugId", json: `{"version":3,"sources":[],"names":[],"mappings":"","debugId":"ABCDEF01-0000-4000-8000-000000000000"}`, wantLines: 1, wantID: "abcdef01-0000-4000-8000-000000000000"},
		{name: "debug_id", json: `{"version":3,"sources":[],"names":[],"mappings":"","debug_id":"abcdef01-0000-4000-8000-000000000001"}`, wantLines: 1, wantID: "abcdef01-0000-4000-8000-000000000001"},
		{name: "version 2", json: `{"version":2,"sources":[],"mappings":""}`, wantErr: "version 2"},
		{name: "index map", json: `{"version":3,"sections":[]}`, wantErr: "index maps"},
		{name: "not json", json: `{"version":3,`, wantErr: "source map:"},
		{name: "source out of range", json: `{"version":3,"sources":["a.js"],"mappings":"ACAA"}`, wantErr: "source 1"},
		{name: "name out of range", json: `{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAAA"}`, wantErr: "name 0 out of range"},
		{name: "negative column", json: `{"version":3,"sources":["a.js"],"mappings":"D"}`, wantErr: "generated column -1"},
		{name: "two fields", json: `{"version":3,"sources":["a.js"],"mappings":"AA"}`, wantErr: "segment of 2 fields"},
		{name: "six fields", json: `{"version":3,"sources":["a.js"],"names":["a"],"mappings":"AAAAAA"}`, wantErr: "more than 5 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.json))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantLines, m.Lines())
			assert.Len(t, m.segments, tt.wantSegs)
			assert.Equal(t, tt.wantID, m.DebugID)
			assert.Positive(t, m.Size())
		})
	}
}

func TestParseSortsUnorderedLineAndAppliesSourceRoot(t *testing.T) {
	// Columns 10 then 0 on one line; the lookup must still see them in
	// order.
	mappings := encodeVLQ(10) + "AAA," + encodeVLQ(-10) + "CAA"
	m, err := Parse(fmt.Appendf(nil, `{"version":3,"sourceRoot":"webpack://app/","sources":["x.js","https://h/y.js"],"names":[],"mappings":%q}`, mappings))
	require.NoError(t, err)
	tok, ok := m.At(0, 5)
	require.True(t, ok)
	assert.Equal(t, Token{GenLine: 0, GenColumn: 0, Source: "https://h/y.js", HasSource: true}, tok)
	tok, ok = m.At(0, 12)
	require.True(t, ok)
	assert.Equal(t, "webpack://app/x.js", tok.Source)
	_, ok = m.At(1, 0)
	assert.False(t, ok, "a line past the last has nothing")
}

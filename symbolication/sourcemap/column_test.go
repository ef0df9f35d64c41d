package sourcemap

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// functionAtColumnScan is functionAtColumn as it was before the column
// index: FunctionAt on every line. It is the reference the index is
// checked against, and the baseline of BenchmarkFunctionAtColumn.
func functionAtColumnScan(m *Map, column int) (Token, bool) {
	var found Token
	n := 0
	for l := range m.Lines() {
		if t, ok := m.FunctionAt(l, column); ok {
			if found, n = t, n+1; n > 1 {
				return Token{}, false
			}
		}
	}
	return found, n == 1
}

// checkColumns compares the index with the scan at every column around
// the map's segments.
func checkColumns(t *testing.T, m *Map) {
	t.Helper()
	cols := map[int]bool{-1: true, 0: true, 1 << 31: true, 1<<31 - 1: true}
	for _, s := range m.segments {
		for d := -1; d <= 2; d++ {
			cols[int(s.genColumn)+d] = true
		}
	}
	for c := range cols {
		want, wantOK := functionAtColumnScan(m, c)
		got, ok := m.functionAtColumn(c)
		require.Equal(t, wantOK, ok, "column %d", c)
		require.Equal(t, want, got, "column %d", c)
	}
}

func TestFunctionAtColumnIndex(t *testing.T) {
	tests := []struct {
		name    string
		mapJSON string
		column  int
		want    string // "" for no answer
	}{
		{name: "one line names it", mapJSON: `{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA,EAAE"}`, column: 1, want: "f"},
		{name: "last segment of a line answers every later column", mapJSON: `{"version":3,"sources":["a.js"],"names":["f"],"mappings":"AAAAA"}`, column: 1 << 20, want: "f"},
		{name: "at the segment's own column: nothing", mapJSON: `{"version":3,"sources":["a.js"],"names":["f"],"mappings":"AAAAA"}`, column: 0},
		{name: "two lines name one there: ambiguous", mapJSON: `{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA;AAAAC"}`, column: 3},
		{name: "one line named, the other unnamed", mapJSON: `{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA;AAAA"}`, column: 3, want: "f"},
		{name: "next segment closes the span", mapJSON: `{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA,EAAE;GAAAC"}`, column: 2, want: "f"},
		{name: "past the next segment another line's", mapJSON: `{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA,EAAE;GAAAC"}`, column: 4, want: "g"},
		{name: "duplicate columns: the last answers", mapJSON: `{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA,AAAAC"}`, column: 1, want: "g"},
		{name: "segment without a source names nothing", mapJSON: `{"version":3,"sources":["a.js"],"names":["f"],"mappings":"A,C"}`, column: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.mapJSON))
			require.NoError(t, err)
			got, ok := m.functionAtColumn(tt.column)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, got.Name)
			checkColumns(t, m)
		})
	}
}

// staircaseMap is an unminified bundle's map: line l has a named segment
// at column l and an unnamed one at l+1, so exactly one line names a
// function at each column c (line c-1), as in a bundle whose functions
// start at distinct columns.
func staircaseMap(lines int) []byte {
	var b strings.Builder
	b.WriteString(`{"version":3,"sources":["src/app.js"],"names":["f0","f1","f2","f3","f4","f5","f6"],"mappings":"`)
	prevCol, prevName, prevLine := int64(0), int64(0), int64(0)
	for l := range int64(lines) {
		if l > 0 {
			b.WriteByte(';')
		}
		// The generated column restarts on each line; the others are
		// relative across lines.
		b.WriteString(encodeVLQ(l) + "A" + encodeVLQ(l-prevLine) + encodeVLQ(-prevCol) + encodeVLQ(l%7-prevName))
		b.WriteString("," + encodeVLQ(1) + "AAC")
		prevLine, prevCol, prevName = l, 1, l%7
	}
	b.WriteString(`"}`)
	return []byte(b.String())
}

// TestFunctionAtColumnCostPerFrame: 4,000 distinct frames asked by column
// in a 300,000-line (unminified) map. Asking every line per frame took 42 s
// on this shared machine (5.7 s on a quiet one); the index is made once
// and each frame is a binary search.
func TestFunctionAtColumnCostPerFrame(t *testing.T) {
	m, err := Parse(staircaseMap(300_000))
	require.NoError(t, err)
	start := time.Now()
	for i := range 4000 {
		c := 1 + i*73
		got, ok := m.functionAtColumn(c)
		require.True(t, ok, "column %d", c)
		require.Equal(t, c-1, got.GenLine, "column %d", c)
		require.Equal(t, fmt.Sprintf("f%d", (c-1)%7), got.Name, "column %d", c)
	}
	elapsed := time.Since(start)
	t.Logf("4,000 frames in %d lines: %v", m.Lines(), elapsed)
	assert.Less(t, elapsed, 3*time.Second, "the index makes the lookup independent of the lines")
	for _, c := range []int{0, 1, 4, 5, 8, 11, 299_999, 300_000, 300_001, 1 << 20} {
		want, wantOK := functionAtColumnScan(m, c)
		got, ok := m.functionAtColumn(c)
		assert.Equal(t, wantOK, ok, "column %d", c)
		assert.Equal(t, want, got, "column %d", c)
	}
}

// FuzzFunctionAtColumn: on any map the index answers as the scan of every
// line does.
func FuzzFunctionAtColumn(f *testing.F) {
	f.Add([]byte(`{"version":3,"sources":["a.js"],"names":["f","g"],"mappings":"AAAAA,EAAE;GAAAC"}`))
	f.Add([]byte(`{"version":3,"sources":["a.js","b.js"],"names":["f","g","h"],"mappings":"AAAAA,AAAAC;;CCCCC,CAAA,EAAAD"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil || len(m.segments) > 500 {
			return
		}
		checkColumns(t, m)
	})
}

package sourcemap

import (
	"fmt"
	"strings"
	"testing"

	gosourcemap "github.com/go-sourcemap/sourcemap"
)

// syntheticMap is a minified bundle's map: lines of segments alternating
// between named and unnamed, over sources and names as many as a large
// application has.
func syntheticMap(lines, segmentsPerLine int) []byte {
	var b strings.Builder
	var sources, names []string
	for i := range 200 {
		sources = append(sources, fmt.Sprintf("%q", fmt.Sprintf("webpack://app/src/module%d.ts", i)))
	}
	for i := range 5000 {
		names = append(names, fmt.Sprintf("%q", fmt.Sprintf("identifier%d", i)))
	}
	fmt.Fprintf(&b, `{"version":3,"sources":[%s],"names":[%s],"mappings":"`, strings.Join(sources, ","), strings.Join(names, ","))
	// Absolute values of each segment; "mappings" holds their deltas.
	var src, srcLine, srcCol, name, prevSrc, prevLine, prevCol, prevName int64
	for l := range lines {
		if l > 0 {
			b.WriteByte(';')
		}
		for s := range segmentsPerLine {
			if s > 0 {
				b.WriteByte(',')
			}
			src, srcLine, srcCol = int64(s/500%200), int64(s/20), int64(s%20*4)
			b.WriteString(encodeVLQ(int64(3 + s%7)))
			b.WriteString(encodeVLQ(src - prevSrc))
			b.WriteString(encodeVLQ(srcLine - prevLine))
			b.WriteString(encodeVLQ(srcCol - prevCol))
			prevSrc, prevLine, prevCol = src, srcLine, srcCol
			if s%2 == 0 {
				name = int64(s / 2 % 5000)
				b.WriteString(encodeVLQ(name - prevName))
				prevName = name
			}
		}
	}
	b.WriteString(`"}`)
	return []byte(b.String())
}

// BenchmarkParse is a cold source map load: this package's decoder beside
// github.com/go-sourcemap/sourcemap (the library Elastic's APM Server
// forked) on the same 2-line, 400,000-segment map.
func BenchmarkParse(b *testing.B) {
	data := syntheticMap(2, 200_000)
	b.Run("sourcemap", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-sourcemap", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			c, err := gosourcemap.Parse("", data)
			if err != nil {
				b.Fatal(err)
			}
			// go-sourcemap decodes "mappings" on the first lookup.
			c.Source(1, 1)
		}
	})
}

// BenchmarkFunctionAt is one warm lookup in that map.
func BenchmarkFunctionAt(b *testing.B) {
	m, err := Parse(syntheticMap(2, 200_000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	col := 0
	for b.Loop() {
		m.FunctionAt(1, col)
		col = (col + 4099) % 1_000_000
	}
}

// BenchmarkFunctionAtColumn is one caller-line frame in a 300,000-line
// map: the column index (made once, before the timer) beside asking every
// line as before it.
func BenchmarkFunctionAtColumn(b *testing.B) {
	m, err := Parse(staircaseMap(300_000))
	if err != nil {
		b.Fatal(err)
	}
	m.functionAtColumn(1)
	for _, bc := range []struct {
		name   string
		lookup func(column int) (Token, bool)
	}{
		{"index", m.functionAtColumn},
		{"scan", func(c int) (Token, bool) { return functionAtColumnScan(m, c) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			c := 1
			for b.Loop() {
				if _, ok := bc.lookup(c); !ok {
					b.Fatalf("column %d unresolved", c)
				}
				c = (c+7919)%299_999 + 1
			}
		})
	}
}

// BenchmarkIndexColumns is the one-time cost of the column index of that
// map.
func BenchmarkIndexColumns(b *testing.B) {
	data := staircaseMap(300_000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		m, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		m.functionAtColumn(1)
	}
}

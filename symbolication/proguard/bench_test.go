package proguard

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"
)

// syntheticMapping writes a mapping the shape of a large app's: classes of
// 20 methods, each with two ranges and, every third method, a two-deep
// inline group.
func syntheticMapping(classes int) []byte {
	var b bytes.Buffer
	b.WriteString("# compiler: R8\n")
	for c := 0; c < classes; c++ {
		fmt.Fprintf(&b, "com.example.pkg%d.SomeClass%d -> a.b%d:\n", c%50, c, c)
		fmt.Fprintf(&b, "# {\"id\":\"sourceFile\",\"fileName\":\"SomeClass%d.kt\"}\n", c)
		fmt.Fprintf(&b, "    java.lang.String field%d -> a\n", c)
		line := 1
		for m := 0; m < 20; m++ {
			obf := fmt.Sprintf("m%d", m)
			fmt.Fprintf(&b, "    %d:%d:void method%d(int,java.lang.String):%d:%d -> %s\n", line, line+4, m, 100+m*10, 104+m*10, obf)
			line += 5
			if m%3 == 0 {
				fmt.Fprintf(&b, "    %d:%d:int com.example.util.Helper.compute(int):%d:%d -> %s\n", line, line, 7, 7, obf)
				fmt.Fprintf(&b, "    %d:%d:void method%d(int,java.lang.String):%d -> %s\n", line, line, m, 105+m*10, obf)
				line++
			}
			fmt.Fprintf(&b, "    %d:%d:void method%d(int,java.lang.String):%d:%d -> %s\n", line, line+2, m, 106+m*10, 108+m*10, obf)
			line += 3
		}
	}
	return b.Bytes()
}

// BenchmarkParse is a cold load of a 5,000-class mapping; scanning its
// lines is the reference for the parser's own cost.
func BenchmarkParse(b *testing.B) {
	data := syntheticMapping(5000)
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var m *Mapping
		for b.Loop() {
			var err error
			if m, err = Parse(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(m.Size())/float64(len(data)), "size/input")
	})
	b.Run("reference-line-scan", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
			}
		}
	})
}

// BenchmarkRemap is 10,000 warm lookups spread over classes, methods and
// lines (a third of them inlined).
func BenchmarkRemap(b *testing.B) {
	m, err := Parse(bytes.NewReader(syntheticMapping(5000)))
	if err != nil {
		b.Fatal(err)
	}
	type query struct {
		class, method string
		line          int
	}
	queries := make([]query, 10_000)
	for i := range queries {
		queries[i] = query{fmt.Sprintf("a.b%d", i*7%5000), fmt.Sprintf("m%d", i%20), 1 + i%180}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range queries {
			_ = m.Remap(q.class, q.method, q.line)
		}
	}
	b.ReportMetric(float64(b.N*len(queries))/b.Elapsed().Seconds(), "lookups/s")
}

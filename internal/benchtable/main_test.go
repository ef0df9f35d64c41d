package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goTestOutput is shaped like `go test -bench=. -benchmem ./...` on two
// packages, with -count=3 for the first one and log noise in between.
const goTestOutput = `goos: linux
goarch: amd64
pkg: github.com/sentryprofile/otelcol-sentryprofile/translator/sentry
cpu: AMD EPYC
BenchmarkDecode/EncodingJSON-2         	     100	   2000000 ns/op	  50.00 MB/s	  400000 B/op	    5000 allocs/op
BenchmarkDecode/EncodingJSON-2         	     100	   2100000 ns/op	  47.62 MB/s	  400000 B/op	    5000 allocs/op
BenchmarkDecode/EncodingJSON-2         	     100	   1900000 ns/op	  52.63 MB/s	  400000 B/op	    5000 allocs/op
BenchmarkDecode/Chunk-2                	     500	    500000 ns/op	 200.00 MB/s	   80000 B/op	     100 allocs/op
BenchmarkDecode/Chunk-2                	     500	    400000 ns/op	 250.00 MB/s	   80000 B/op	     100 allocs/op
BenchmarkDecode/Chunk-2                	     500	    600000 ns/op	 166.67 MB/s	   80000 B/op	     100 allocs/op
BenchmarkEncode/EncodingJSON-2         	     100	   1000000 ns/op	  100.0 MB/s	  200000 B/op	    1000 allocs/op
BenchmarkEncode/AppendChunkJSON-2      	    1000	    250000 ns/op	  400.0 MB/s	       0 B/op	       0 allocs/op
BenchmarkNormalize-2                   	   10000	     12000 ns/op
    some_test.go:12: a benchmark logged this line
PASS
ok  	github.com/sentryprofile/otelcol-sentryprofile/translator/sentry	12.345s
pkg: github.com/sentryprofile/otelcol-sentryprofile/translator
BenchmarkBuild/Python-2                	     300	   4000000 ns/op	  25.00 MB/s	  900000 B/op	   20000 allocs/op
PASS
ok  	github.com/sentryprofile/otelcol-sentryprofile/translator	3.210s
`

func TestParse(t *testing.T) {
	results, failed, err := parse(strings.NewReader(goTestOutput))
	require.NoError(t, err)
	assert.False(t, failed)

	byName := map[string]result{}
	for _, r := range results {
		byName[shortPackage(r.Package)+" "+r.Name] = r
	}
	tests := []struct {
		key  string
		want result
	}{
		{"translator/sentry Decode/EncodingJSON", result{NsPerOp: 2000000, MBPerSec: 50, BytesPerOp: 400000, AllocsPerOp: 5000, Runs: 3}},
		{"translator/sentry Decode/Chunk", result{NsPerOp: 500000, MBPerSec: 200, BytesPerOp: 80000, AllocsPerOp: 100, Runs: 3}},
		{"translator/sentry Encode/AppendChunkJSON", result{NsPerOp: 250000, MBPerSec: 400, BytesPerOp: 0, AllocsPerOp: 0, Runs: 1}},
		{"translator/sentry Normalize", result{NsPerOp: 12000, MBPerSec: 0, BytesPerOp: -1, AllocsPerOp: -1, Runs: 1}},
		{"otelcol-sentryprofile/translator Build/Python", result{NsPerOp: 4000000, MBPerSec: 25, BytesPerOp: 900000, AllocsPerOp: 20000, Runs: 1}},
	}
	require.Len(t, results, 6)
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := byName[tt.key]
			require.True(t, ok, "benchmark %q not parsed; have %v", tt.key, byName)
			got.Package, got.Name = "", ""
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseReportsFailure(t *testing.T) {
	tests := []struct {
		name   string
		output string
		failed bool
	}{
		{"clean run", "pkg: p\nBenchmarkA-2 10 5 ns/op\nPASS\nok p 1s\n", false},
		{"failing package", "pkg: p\nBenchmarkA-2 10 5 ns/op\n--- FAIL: BenchmarkB\nFAIL\nFAIL p 1s\n", true},
		{"build failure", "FAIL\tgithub.com/x/y [build failed]\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, failed, err := parse(strings.NewReader(tt.output))
			require.NoError(t, err)
			assert.Equal(t, tt.failed, failed)
		})
	}
}

func TestParseBenchmarkLine(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantName string
		wantOK   bool
	}{
		{"with procs suffix", "BenchmarkX/y-16 10 5 ns/op", "X/y", true},
		{"without procs suffix (GOMAXPROCS=1)", "BenchmarkX/y 10 5 ns/op", "X/y", true},
		{"sub-benchmark name ending in a number keeps it", "BenchmarkX/size-1024-2 10 5 ns/op", "X/size-1024", true},
		{"log line starting with Benchmark", "Benchmarking the decoder now", "", false},
		{"name alone (benchmark failed before reporting)", "BenchmarkX-2", "", false},
		{"no ns/op", "BenchmarkX-2 10 5 MB/s", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, _, ok := parseBenchmarkLine(tt.line)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantName, name)
		})
	}
}

func TestReference(t *testing.T) {
	all := []result{
		{Package: "a", Name: "Decode/EncodingJSON", NsPerOp: 1000},
		{Package: "a", Name: "Encode/EncodingJSON", NsPerOp: 800},
		{Package: "a", Name: "Decode/Fast", NsPerOp: 250},
		{Package: "a", Name: "Encode/Fast", NsPerOp: 400},
		{Package: "a", Name: "Other", NsPerOp: 10},
		{Package: "b", Name: "Decode/Fast", NsPerOp: 100},
	}
	tests := []struct {
		name        string
		bench       result
		wantRef     string
		wantFound   bool
		wantSpeedup float64
	}{
		{"same parent benchmark wins", all[2], "Decode/EncodingJSON", true, 4},
		{"other parent benchmark", all[3], "Encode/EncodingJSON", true, 2},
		{"another workload is not compared with a reference", all[4], "", false, 0},
		{"reference is not compared with itself", all[0], "", false, 0},
		{"package without a reference", all[5], "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, found := reference(tt.bench, all)
			require.Equal(t, tt.wantFound, found)
			if !found {
				return
			}
			assert.Equal(t, tt.wantRef, ref.Name)
			assert.InDelta(t, tt.wantSpeedup, speedup(tt.bench, ref), 1e-9)
		})
	}
}

func TestWriteTable(t *testing.T) {
	results, _, err := parse(strings.NewReader(goTestOutput))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, writeTable(&buf, results))

	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 1+len(results))
	assert.Contains(t, lines[0], "vs encoding/json")

	rows := map[string][]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[f[1]] = f
	}
	tests := []struct {
		bench string
		want  []string // ns/op, MB/s, B/op, allocs/op, ratio
	}{
		{"Decode/EncodingJSON", []string{"2000000", "50.00", "400000", "5000", "reference"}},
		{"Decode/Chunk", []string{"500000", "200.00", "80000", "100", "4.00x"}},
		{"Encode/AppendChunkJSON", []string{"250000", "400.00", "0", "0", "4.00x"}},
		{"Normalize", []string{"12000", "-", "-", "-", "-"}},
		{"Build/Python", []string{"4000000", "25.00", "900000", "20000", "-"}},
	}
	for _, tt := range tests {
		t.Run(tt.bench, func(t *testing.T) {
			row, ok := rows[tt.bench]
			require.True(t, ok, "no row for %s in\n%s", tt.bench, buf.String())
			assert.Equal(t, tt.want, row[2:])
		})
	}
}

// Command benchtable reads `go test -bench -benchmem` output on stdin and
// prints one table row per benchmark: time, throughput, allocations, and how
// it compares with the encoding/json reference of its package.
//
// A benchmark is a reference when its name contains "EncodingJSON". Each
// other benchmark is compared with the reference of the same package whose
// name shares the longest prefix with its own, so BenchmarkDecode/Chunk is
// measured against BenchmarkDecode/EncodingJSON rather than against
// BenchmarkEncode/EncodingJSON. Repeated runs (-count) are summarised by their
// median. The raw output passes through to stderr when -tee is set, so a
// failing benchmark is never hidden behind the table.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// referenceMarker names the benchmarks every other one is compared with.
const referenceMarker = "EncodingJSON"

// result is one benchmark's measurements, medians over its runs.
type result struct {
	Package     string
	Name        string // without the "Benchmark" prefix and the -GOMAXPROCS suffix
	NsPerOp     float64
	MBPerSec    float64 // 0 when the benchmark does not call b.SetBytes
	BytesPerOp  float64 // -1 when -benchmem was not set
	AllocsPerOp float64 // -1 when -benchmem was not set
	Runs        int
}

// run is one line of benchmark output.
type run struct {
	nsPerOp, mbPerSec, bytesPerOp, allocsPerOp float64
}

func main() {
	tee := flag.Bool("tee", false, "copy the raw benchmark output to stderr")
	flag.Parse()

	var in io.Reader = os.Stdin
	if *tee {
		in = io.TeeReader(os.Stdin, os.Stderr)
	}
	failed, err := printTable(in, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if failed {
		// The table is still printed: the benchmarks that did run are worth
		// seeing, but the run as a whole must not look green.
		fmt.Fprintln(os.Stderr, "benchtable: the benchmark run reported a failure")
		os.Exit(1)
	}
}

// printTable writes the table of the benchmark output in, and whether the
// output reported a failure.
func printTable(in io.Reader, out io.Writer) (bool, error) {
	results, failed, err := parse(in)
	if err != nil {
		return failed, err
	}
	return failed, writeTable(out, results)
}

// parse reads benchmark output and returns the results in the order their
// first run appeared, and whether the output reported a failing package.
func parse(r io.Reader) ([]result, bool, error) {
	var c runCollector
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		c.line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, c.failed, fmt.Errorf("reading benchmark output: %w", err)
	}
	return c.results(), c.failed, nil
}

// benchKey names a benchmark: its package and name.
type benchKey struct{ pkg, name string }

// runCollector gathers the runs of each benchmark, in the order their
// first run appeared, and notes a failing package.
type runCollector struct {
	runs   map[benchKey][]run
	order  []benchKey
	pkg    string
	failed bool
}

func (c *runCollector) line(line string) {
	switch {
	case strings.HasPrefix(line, "pkg: "):
		c.pkg = strings.TrimSpace(strings.TrimPrefix(line, "pkg: "))
	case strings.HasPrefix(line, "FAIL"), strings.HasPrefix(line, "--- FAIL"):
		c.failed = true
	case strings.HasPrefix(line, "Benchmark"):
		// Not a run: a benchmark's own log output, or its name before a
		// failure.
		if name, rn, ok := parseBenchmarkLine(line); ok {
			c.add(benchKey{c.pkg, name}, rn)
		}
	}
}

func (c *runCollector) add(k benchKey, rn run) {
	if c.runs == nil {
		c.runs = map[benchKey][]run{}
	}
	if _, seen := c.runs[k]; !seen {
		c.order = append(c.order, k)
	}
	c.runs[k] = append(c.runs[k], rn)
}

// results are the medians of each benchmark's runs.
func (c *runCollector) results() []result {
	out := make([]result, 0, len(c.order))
	for _, k := range c.order {
		rs := c.runs[k]
		out = append(out, result{
			Package:     k.pkg,
			Name:        k.name,
			NsPerOp:     median(rs, func(r run) float64 { return r.nsPerOp }),
			MBPerSec:    median(rs, func(r run) float64 { return r.mbPerSec }),
			BytesPerOp:  median(rs, func(r run) float64 { return r.bytesPerOp }),
			AllocsPerOp: median(rs, func(r run) float64 { return r.allocsPerOp }),
			Runs:        len(rs),
		})
	}
	return out
}

// parseBenchmarkLine reads "BenchmarkName-8  1000  123 ns/op  45.6 MB/s
// 789 B/op  3 allocs/op": a name, an iteration count, then value-unit pairs.
func parseBenchmarkLine(line string) (string, run, bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 {
		return "", run{}, false
	}
	if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
		return "", run{}, false
	}
	rn := run{nsPerOp: -1, bytesPerOp: -1, allocsPerOp: -1}
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return "", run{}, false
		}
		rn.set(fields[i+1], v)
	}
	if rn.nsPerOp < 0 {
		return "", run{}, false
	}
	return trimName(fields[0]), rn, true
}

// set records a value of one of the units the table shows.
func (rn *run) set(unit string, v float64) {
	switch unit {
	case "ns/op":
		rn.nsPerOp = v
	case "MB/s":
		rn.mbPerSec = v
	case "B/op":
		rn.bytesPerOp = v
	case "allocs/op":
		rn.allocsPerOp = v
	}
}

// trimName drops the "Benchmark" prefix and the "-GOMAXPROCS" suffix that
// the testing package appends when GOMAXPROCS is not 1.
func trimName(name string) string {
	name = strings.TrimPrefix(name, "Benchmark")
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	return name
}

func median(rs []run, field func(run) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = field(r)
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// reference returns the encoding/json benchmark b is compared with: among
// the references of b's package and top-level benchmark (the name before the
// first "/"), the one sharing the longest name prefix with b, the first one
// on a tie. It returns false for a reference itself and for benchmarks whose
// group has none: a ratio between different workloads means nothing.
func reference(b result, all []result) (result, bool) {
	if strings.Contains(b.Name, referenceMarker) {
		return result{}, false
	}
	best, bestLen, found := result{}, -1, false
	for _, r := range all {
		if !isReferenceFor(r, b) {
			continue
		}
		if l := commonPrefixLen(r.Name, b.Name); l > bestLen {
			best, bestLen, found = r, l, true
		}
	}
	return best, found
}

// isReferenceFor reports whether r is a reference of b's package and group.
func isReferenceFor(r, b result) bool {
	return r.Package == b.Package && group(r.Name) == group(b.Name) && strings.Contains(r.Name, referenceMarker)
}

// group is the top-level benchmark of a name: "Decode" for "Decode/Ours".
func group(name string) string {
	top, _, _ := strings.Cut(name, "/")
	return top
}

func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// speedup says how many times faster b is than its reference; above 1 means
// faster than encoding/json.
func speedup(b, ref result) float64 {
	if b.NsPerOp <= 0 {
		return 0
	}
	return ref.NsPerOp / b.NsPerOp
}

func writeTable(w io.Writer, results []result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tbenchmark\tns/op\tMB/s\tB/op\tallocs/op\tvs encoding/json\t")
	for _, b := range results {
		vs := "-"
		if strings.Contains(b.Name, referenceMarker) {
			vs = "reference"
		} else if ref, ok := reference(b, results); ok {
			vs = fmt.Sprintf("%.2fx", speedup(b, ref))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			shortPackage(b.Package), b.Name,
			formatNumber(b.NsPerOp, 0), formatOptional(b.MBPerSec, b.MBPerSec > 0, 2),
			formatOptional(b.BytesPerOp, b.BytesPerOp >= 0, 0), formatOptional(b.AllocsPerOp, b.AllocsPerOp >= 0, 0),
			vs)
	}
	return tw.Flush()
}

// shortPackage keeps the last two path elements: enough to tell the
// translator's packages apart without the module path on every line.
func shortPackage(pkg string) string {
	parts := strings.Split(pkg, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}

func formatNumber(v float64, decimals int) string {
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

func formatOptional(v float64, present bool, decimals int) string {
	if !present {
		return "-"
	}
	return formatNumber(v, decimals)
}

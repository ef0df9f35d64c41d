package complexityguard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	// growth is the factor between the two sizes of a row.
	growth = 8
	// maxRatio is the most a run at growth × n may allocate (bytes,
	// allocations) or count over the run at n: linear code costs 8× (plus
	// amortised buffer growth), quadratic 64×.
	maxRatio = 10.0
	// maxCPURatio is the same bound for CPU time, which is not only the
	// code's operations: linear and n log n code whose maps and tables
	// outgrow the CPU caches between n and 8n measured 10–13× here (ART
	// methods, ProGuard classes, export of 128,000 functions), while every
	// quadratic path of the known defects measured 23–60×.
	maxCPURatio = 16.0
	// minCPU is the least CPU time of the 1× run of a row judged by CPU:
	// below it the clocks' resolution and the scheduler's noise dominate.
	minCPU = 5 * time.Millisecond
	// cpuRuns is how many runs the CPU time is the minimum of.
	cpuRuns = 3
	// maxCalibrations bounds the doublings of n looking for minCPU, and
	// calibrationCap the default maxN of a row.
	maxCalibrations = 6
	calibrationCap  = 8
	// minJudgedCPU is the least CPU time of a 1× run whose ratio is
	// judged when the cap stopped the calibration before minCPU.
	minJudgedCPU = time.Millisecond
	// raceDivisorCPU scales n down under the race detector, which slows
	// the code 2–20× and under which only allocations are judged, for the
	// HTTP rows judged by CPU time: their defects allocate linearly, so under
	// the race detector only their allocations are checked, and a smaller
	// n keeps a quadratic path from taking minutes. The rows judged by
	// allocations keep their n.
	raceDivisorCPU = 8
)

// outcome is what a run produced, read after its measurement.
type outcome struct {
	// input is the size in bytes of what the run was given (after
	// decompression), output the size of what it produced, in the
	// representation the row names (OTLP protobuf, a formatted text).
	input, output int64
	// work is the row's own count of work done when it has one (requests
	// made to a stand-in, frames resolved), else 0.
	work int64
}

// sized is the code under test prepared for one size: run is measured,
// observe reads what the last run produced.
type sized struct {
	run     func()
	observe func() outcome
}

// row is one entry point under guard, along the dimension an attacker
// grows.
type row struct {
	name string
	// itemType is the router item type the row sends, "" when it is not
	// a receiver row.
	itemType string
	// fuzz names the fuzz targets whose code this row covers, as
	// "<package path in the module>.<FuzzName>".
	fuzz []string
	// dimension says what grows with n.
	dimension string
	// defect names the known defect this row catches, printed with a
	// failure so that the message says what regressed.
	defect string
	// n is the 1× size; rows with a clock double it until the 1× run
	// takes minCPU, up to maxN (default calibrationCap × n), which keeps
	// 8n within the limits of the item or format.
	n     int
	maxN  int
	clock Clock
	// build prepares the input of size n (not measured).
	build func(t testing.TB, n int) sized
	// maxOutput is the documented bound of the output for an input of
	// the given size; nil means the default, linearOutput.
	maxOutput func(input int64) int64
	// maxWork bounds the row's own count at size n when the count has an
	// absolute limit (requests per batch); nil means only its ratio is
	// judged.
	maxWork func(n int) int64
}

// linearOutput is the default bound of a decoder's output: proportional to
// its input. Sentry's JSON is wordier than OTLP protobuf, so real payloads
// stay well under 4×; a bomb (a template filled with a long parameter many
// times) does not.
func linearOutput(input int64) int64 { return 4*input + 64<<10 }

// measured is one row's result at one size.
type measured struct {
	n    int
	cost Cost
	out  outcome
}

// cpuJudged reports whether the row's CPU time is judged in this binary.
func (r row) cpuJudged() bool { return r.clock != NoClock && !RaceEnabled() }

// measure builds the row at n and measures it: allocations on the first
// run of the fresh instance (a receiver's pools and caches start empty at
// every size, so a reused buffer cannot make the small run look cheaper
// than its input), CPU time as the least of cpuRuns further runs.
//
// enough, when not nil, ends the CPU runs early: it is told the least CPU
// time so far, and a large run that already passes cannot pass by more
// with further runs (nor can one that fails by far fail by less).
func (r row) measure(t *testing.T, n int, enough func(time.Duration) bool) measured {
	t.Helper()
	s := r.build(t, n)
	c, err := Measure(NoClock, s.run)
	require.NoError(t, err)
	out := s.observe()
	if r.cpuJudged() {
		for i := range cpuRuns {
			cpu, err := Measure(r.clock, s.run)
			require.NoError(t, err)
			if i == 0 || cpu.CPU < c.CPU {
				c.CPU = cpu.CPU
			}
			if enough != nil && enough(c.CPU) {
				break
			}
		}
	}
	return measured{n: n, cost: c, out: out}
}

// calibrate doubles n until one run of the row takes minCPU.
func (r row) calibrate(t *testing.T) int {
	t.Helper()
	n, maxN := r.n, r.maxN
	if maxN == 0 {
		maxN = calibrationCap * r.n
	}
	for range maxCalibrations {
		s := r.build(t, n)
		c, err := Measure(r.clock, s.run)
		require.NoError(t, err)
		if c.CPU >= minCPU || 2*n > maxN {
			break
		}
		n *= 2
	}
	return n
}

// check measures the row at n and growth × n and judges the ratios and the
// output bound.
func (r row) check(t *testing.T) {
	// One small run first: what the process initialises once (lazy
	// tables, the HTTP client's first connection) is not the row's cost.
	warm := r.build(t, max(1, r.n/growth))
	warm.run()
	n := r.n
	switch {
	case r.cpuJudged():
		n = r.calibrate(t)
	case RaceEnabled() && r.clock == ProcessClock:
		n = max(1, r.n/raceDivisorCPU)
	}
	small := r.measure(t, n, nil)
	large := r.measure(t, growth*n, func(cpu time.Duration) bool {
		ratio := Ratio(float64(small.cost.CPU), float64(cpu))
		return ratio <= maxCPURatio || ratio > 3*maxCPURatio
	})
	blame := ""
	if r.defect != "" {
		blame = " — known defect: " + r.defect
	}
	t.Logf("%s along %s: n=%d → %d: alloc %d → %d B (%.1f×), mallocs %d → %d (%.1f×), cpu %v → %v (%.1f×), output %d → %d B, work %d → %d",
		r.name, r.dimension, n, growth*n,
		small.cost.Bytes, large.cost.Bytes, Ratio(float64(small.cost.Bytes), float64(large.cost.Bytes)),
		small.cost.Mallocs, large.cost.Mallocs, Ratio(float64(small.cost.Mallocs), float64(large.cost.Mallocs)),
		small.cost.CPU, large.cost.CPU, Ratio(float64(small.cost.CPU), float64(large.cost.CPU)),
		small.out.output, large.out.output, small.out.work, large.out.work)

	judge := func(what string, a, b float64) {
		ratio, bound := Ratio(a, b), maxRatio
		if what == "CPU time" {
			bound = maxCPURatio
		}
		assert.LessOrEqualf(t, ratio, bound, "%s: %s grows %.1f× for %d× the %s (%.0f → %.0f)%s",
			r.name, what, ratio, growth, r.dimension, a, b, blame)
	}
	judge("allocated bytes", float64(small.cost.Bytes), float64(large.cost.Bytes))
	judge("allocations", float64(small.cost.Mallocs), float64(large.cost.Mallocs))
	switch {
	case !r.cpuJudged():
	case small.cost.CPU < minJudgedCPU:
		t.Logf("%s: the 1× run took %v at the largest n its limits allow: CPU time not judged", r.name, small.cost.CPU)
	default:
		judge("CPU time", float64(small.cost.CPU), float64(large.cost.CPU))
	}
	judge("work count", float64(small.out.work), float64(large.out.work))
	maxOut := r.maxOutput
	if maxOut == nil {
		maxOut = linearOutput
	}
	for _, m := range []measured{small, large} {
		assert.LessOrEqualf(t, m.out.output, maxOut(m.out.input), "%s at n=%d: %d bytes out of %d in, over its bound%s",
			r.name, m.n, m.out.output, m.out.input, blame)
		if r.maxWork != nil {
			assert.LessOrEqualf(t, m.out.work, r.maxWork(m.n), "%s at n=%d: work count over its bound%s", r.name, m.n, blame)
		}
	}
}

// allRows is every row of the guard.
func allRows() []row {
	var rows []row
	rows = append(rows, receiverRows()...)
	rows = append(rows, decoderRows()...)
	rows = append(rows, symbolicationRows()...)
	rows = append(rows, symbRows()...)
	rows = append(rows, exporterRows()...)
	rows = append(rows, oteleventRows()...)
	rows = append(rows, groupingRows()...)
	rows = append(rows, jsscopeRows()...)
	rows = append(rows, signalsRows()...)
	rows = append(rows, eventperfRows()...)
	rows = append(rows, inflateRows()...)
	rows = append(rows, chunkRows()...)
	rows = append(rows, dictRows()...)
	return rows
}

// TestComplexity runs every row.
func TestComplexity(t *testing.T) {
	start := time.Now()
	for _, r := range allRows() {
		t.Run(r.name, func(t *testing.T) {
			require.NotNil(t, r.build, "row %s has no input", r.name)
			require.NotEmpty(t, r.dimension, "row %s names no dimension", r.name)
			r.check(t)
		})
	}
	t.Logf("guard: %d rows in %v (race detector: %v)", len(allRows()), time.Since(start).Round(time.Millisecond), RaceEnabled())
}

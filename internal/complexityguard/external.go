package complexityguard

import (
	"testing"
)

// Sized is code under test prepared at one size, for the rows that run as
// tests of their own package (their code is unexported): Run is measured;
// Input and Output are the sizes in bytes of what the last run read and
// produced.
type Sized struct {
	Run           func()
	Input, Output func() int64
}

// CheckLinear is the guard's allocation check for such a row: build at n
// and at 8n, each measured on its first run, must allocate at most 10× as
// much (bytes and allocations), and each output must stay within 4× its
// input plus 64 KiB.
func CheckLinear(t *testing.T, dimension string, n int, build func(tb testing.TB, n int) Sized) {
	t.Helper()
	warm := build(t, max(1, n/8))
	warm.Run()
	measure := func(n int) (Cost, Sized) {
		s := build(t, n)
		c, err := Measure(NoClock, s.Run)
		if err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	small, s1 := measure(n)
	large, s8 := measure(8 * n)
	t.Logf("along %s: n=%d → %d: alloc %d → %d B, mallocs %d → %d", dimension, n, 8*n, small.Bytes, large.Bytes, small.Mallocs, large.Mallocs)
	checkAllocGrowth(t, dimension, small, large)
	for _, s := range []Sized{s1, s8} {
		checkOutputBound(t, s)
	}
}

// checkAllocGrowth fails when bytes or allocations grow over 10× for 8×
// the input.
func checkAllocGrowth(t *testing.T, dimension string, small, large Cost) {
	t.Helper()
	for _, c := range []struct {
		what string
		a, b uint64
	}{{"allocated bytes", small.Bytes, large.Bytes}, {"allocations", small.Mallocs, large.Mallocs}} {
		if r := Ratio(float64(c.a), float64(c.b)); r > 10 {
			t.Errorf("%s grows %.1f× for 8× the %s (%d → %d)", c.what, r, dimension, c.a, c.b)
		}
	}
}

// checkOutputBound fails when a run's output passes 4× its input plus
// 64 KiB.
func checkOutputBound(t *testing.T, s Sized) {
	t.Helper()
	if in, out := s.Input(), s.Output(); out > 4*in+64<<10 {
		t.Errorf("%d bytes out of %d in: over 4× its input", out, in)
	}
}

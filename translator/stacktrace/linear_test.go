package stacktrace

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/proccpu"
)

// hostile builds inputs of about n bytes in the shapes that would cost
// more than linear work if a parser rescanned, re-joined or re-walked them.
var hostile = map[string]func(n int) string{
	// Every cause says its outermost frames are its enclosing trace's, so
	// completing one walks the chain back.
	"java deep chain of ... n more": func(n int) string {
		var b strings.Builder
		b.WriteString("java.lang.Exception: top\n\tat a.B.c(B.java:1)\n")
		for b.Len() < n {
			b.WriteString("Caused by: java.lang.Exception: x\n\tat a.B.c(B.java:2)\n\t... 999999 more\n")
		}
		return b.String()
	},
	"java many frames": func(n int) string {
		return "java.lang.Exception: m\n" + strings.Repeat("\tat a.B.c(B.java:1)\n", n/20)
	},
	"java message of many lines": func(n int) string {
		return "java.lang.Exception: m\n" + strings.Repeat("more of the message\n", n/20) + "\tat a.B.c(B.java:1)\n"
	},
	"python long chain": func(n int) string { return pythonTrace(n/200, 2) },
	"python repeated lines": func(n int) string {
		return strings.Repeat("Traceback (most recent call last):\n  File \"a\", line 1, in f\n"+
			"  [Previous line repeated 999 more times]\nE: m\n", n/100)
	},
	"python message of many lines": func(n int) string {
		return "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nE: m\n" + strings.Repeat("line\n", n/5)
	},
	"dotnet header of many inner exceptions": func(n int) string {
		return "System.Exception: a" + strings.Repeat(" ---> System.Exception: b", n/25) + "\n   at A.B.C()\n" +
			strings.Repeat("   --- End of inner exception stack trace ---\n   at A.B.C()\n", n/100)
	},
	"v8 nested eval": func(n int) string {
		return "Error: e\n    at f (" + strings.Repeat("eval at g (", n/11) + "/a.js:1:1" + strings.Repeat(")", n/11) + "\n"
	},
	"v8 many causes": func(n int) string {
		return "Error: e\n" + strings.Repeat("    at f (/a.js:1:2)\n  [cause]: Error: c\n", n/40)
	},
	"go many frames": func(n int) string {
		return "goroutine 1 [running]:\n" + strings.Repeat("main.f(...)\n\t/a.go:1 +0x1\n", n/26)
	},
	"ruby many causes": func(n int) string {
		return strings.Repeat("a.rb:1:in `f': m (E)\n\tfrom a.rb:2:in `g'\n", n/38)
	},
	"one long line": func(n int) string { return "at " + strings.Repeat("(a:", n/3) },
	"many short lines": func(n int) string {
		return "Error: e\n" + strings.Repeat("\n", n)
	},
}

// measure returns the CPU time of one Parse of text (the best of three
// rounds of reps runs) and the bytes one run allocates (the least of three
// runs: TotalAlloc counts the whole process, and a parse that allocates
// nothing read ×50 once a stray runtime allocation of 50 bytes fell in
// its one measured run).
func measure(text string, reps int) (time.Duration, uint64) {
	best := time.Duration(1 << 62)
	for round := 0; round < 3; round++ {
		start := proccpu.Self()
		for i := 0; i < reps; i++ {
			Parse(text)
		}
		best = min(best, (proccpu.Self()-start)/time.Duration(reps))
	}
	alloc := uint64(1 << 63)
	for round := 0; round < 3; round++ {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Parse(text)
		runtime.ReadMemStats(&after)
		alloc = min(alloc, after.TotalAlloc-before.TotalAlloc)
	}
	return best, alloc
}

// TestParseIsLinear checks that 8× the input costs at most 10× the CPU time
// and the allocation, on every hostile shape.
func TestParseIsLinear(t *testing.T) {
	const small = 256 << 10 // both sizes past the caches, so that only the algorithm differs
	for name, gen := range hostile {
		t.Run(name, func(t *testing.T) {
			a, b := gen(small), gen(8*small)
			var ratioT, ratioB float64
			for attempt := 0; attempt < 3; attempt++ { // the machine is shared: retry a disturbed run
				ta, ba := measure(a, 16)
				tb, bb := measure(b, 2)
				ratioT = float64(tb) / float64(max(ta, time.Microsecond))
				ratioB = float64(bb) / float64(max(ba, 1))
				if ratioT <= 10 {
					break
				}
			}
			msg := fmt.Sprintf("%d → %d bytes of input: CPU time ×%.1f, allocation ×%.1f", len(a), len(b), ratioT, ratioB)
			t.Log(msg)
			if ratioT > 10 || ratioB > 10 {
				t.Errorf("not linear: %s", msg)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for name, text := range capturedTexts(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, _, ok := Parse(text); !ok {
					b.Fatal("not recognised")
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traces/s")
		})
	}
}

package complexityguard

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"golang.org/x/sys/unix"
)

// Clock says which CPU clock a measurement reads.
type Clock int

const (
	// NoClock: the row is judged by allocations and its own count only.
	NoClock Clock = iota
	// ThreadClock is CLOCK_THREAD_CPUTIME_ID of the goroutine's locked OS
	// thread: the code under test runs on the calling goroutine and
	// nothing else the process does is counted.
	ThreadClock
	// ProcessClock is CLOCK_PROCESS_CPUTIME_ID: for code that runs on
	// other goroutines (an HTTP server's handler). The garbage collector,
	// which would otherwise add work on its own threads, is off while it is
	// read (see Measure).
	ProcessClock
)

// Cost is what one run of the code under test cost.
type Cost struct {
	// Bytes and Mallocs are the growth of runtime.MemStats TotalAlloc and
	// Mallocs over the run: every allocation of the process, which for
	// these runs is the code under test (and, for HTTP rows, its client).
	Bytes, Mallocs uint64
	// CPU is the run's CPU time on its Clock; 0 with NoClock.
	CPU time.Duration
}

// RaceEnabled reports whether the binary runs under the race detector,
// where CPU times are not comparable and only allocations are judged.
func RaceEnabled() bool { return raceEnabled }

// memoryCeiling is where the garbage collector, off during a measured run,
// comes back: a run of superlinear code must fail its ratio, not take
// the machine's memory with it.
const memoryCeiling = 1 << 30

// Measure runs fn once and returns its cost. The heap is collected first
// so that no earlier garbage is swept during fn, and collection stays off
// while fn runs (up to memoryCeiling), so that the CPU time is fn's own
// work and not a collector cycle that happened to fall in it. fn must not
// start goroutines that outlive it.
func Measure(clock Clock, fn func()) (Cost, error) {
	if clock == ThreadClock {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	// Two collections: the first moves sync.Pool contents to their
	// victim caches, the second frees them, so that no pooled buffer of
	// an earlier run serves this one.
	runtime.GC()
	runtime.GC()
	gcPercent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(memoryCeiling)
	defer func() {
		debug.SetGCPercent(gcPercent)
		debug.SetMemoryLimit(limit)
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start, err := cpuNow(clock)
	if err != nil {
		return Cost{}, err
	}
	fn()
	end, err := cpuNow(clock)
	if err != nil {
		return Cost{}, err
	}
	runtime.ReadMemStats(&after)
	return Cost{
		Bytes:   after.TotalAlloc - before.TotalAlloc,
		Mallocs: after.Mallocs - before.Mallocs,
		CPU:     end - start,
	}, nil
}

// cpuNow reads the clock; 0 for NoClock.
func cpuNow(clock Clock) (time.Duration, error) {
	var id int32
	switch clock {
	case NoClock:
		return 0, nil
	case ThreadClock:
		id = unix.CLOCK_THREAD_CPUTIME_ID
	case ProcessClock:
		id = unix.CLOCK_PROCESS_CPUTIME_ID
	default:
		return 0, fmt.Errorf("complexityguard: unknown clock %d", clock)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, fmt.Errorf("complexityguard: clock_gettime(%d): %w", id, err)
	}
	return time.Duration(ts.Nano()), nil
}

// Ratio is b/a, with a of 0 read as 1 (a run too small to count anything
// is compared with a run that counted b).
func Ratio(a, b float64) float64 {
	if a <= 0 {
		a = 1
	}
	return b / a
}

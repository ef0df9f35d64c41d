package profilesin

import (
	"syscall"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
)

// BenchmarkBuildReused is BenchmarkBuild through one builder reset between
// items, as a receiver's worker uses it.
func BenchmarkBuildReused(b *testing.B) {
	p := translatortest.DecodeBenchChunk(b, benchdata.LargeChunkConfig())
	bld := NewProfilesBuilder(ReceiveOptions{})
	b.ReportAllocs()
	cpu := processCPU(b)
	for b.Loop() {
		bld.Reset(ReceiveOptions{})
		if bld.Add(DecodedProfile{Profile: p}) != len(p.Samples) {
			b.Fatal("samples lost")
		}
		_ = bld.Profiles()
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process has used: on a machine shared
// with other work, wall time per op moves with the load, CPU time much
// less.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

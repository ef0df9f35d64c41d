package benchmarks

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
)

// hugeChunkConfig shapes a V2 chunk just under Relay's 50 MiB item limit:
// the large chunk's 60 s at 101 Hz on 104 threads, with twice its stacks
// and frames.
func hugeChunkConfig() benchdata.ChunkConfig {
	c := benchdata.LargeChunkConfig()
	c.Threads = 104
	c.Stacks = 10_000
	c.Frames = 4_000
	return c
}

// heapObjectsMetric is the heap memory occupied by objects, live or not yet
// swept: what runtime.MemStats.HeapAlloc reports, read without stopping the
// world.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// heapSampleInterval bounds what the sampler can miss: at the allocation
// rates measured here (≤ 2 GB/s) the heap grows less than 0.2 MB between
// two samples, well under 1% of the bound being checked.
const heapSampleInterval = 100 * time.Microsecond

// peakHeap runs f after a full collection and returns the highest heap size
// (heapObjectsMetric) seen while it ran, sampling every heapSampleInterval.
// The heap then holds whatever the caller holds, such as the input item.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: heapObjectsMetric}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		high := read()
		tick := time.NewTicker(heapSampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max(high, read())
				return
			case <-tick.C:
				high = max(high, read())
			}
		}
	}()
	f()
	close(stop)
	return <-peak
}

// BenchmarkTranslate50MiB is the translate path on a 50 MiB item next to
// encoding/json's decode of it. It reports the heap high-water mark of one
// translation relative to the item size (peak-heap/item, target < 4),
// measured before the timed loop as TestPeakHeap50MiBItem measures it: over
// the loop the peak would also count the previous iteration's garbage,
// which no single envelope leaves behind.
func BenchmarkTranslate50MiB(b *testing.B) {
	data := benchdata.ChunkV2(hugeChunkConfig())
	b.Run("EncodingJSON", func(b *testing.B) {
		benchmarkEncodingJSONDecode(b, data)
	})
	b.Run("Ours", func(b *testing.B) {
		var err error
		peak := peakHeap(func() { _, _, err = translate(data) })
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := translate(data); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(peak)/float64(len(data)), "peak-heap/item")
	})
}

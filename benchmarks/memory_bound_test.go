//go:build !race

package benchmarks

import (
	"runtime"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
)

// TestPeakHeap50MiBItem checks the memory target: translating a 50 MiB
// item, with the item itself held in memory as the receiver holds it,
// peaks below 4× its size. The bound is on the sampled high-water mark of
// the heap, garbage included, under the default GOGC, so it is what the
// process needs, not only what is live. It is a test rather than a timing
// because the peak depends on what is allocated and on the GC pacer, not on
// the machine's speed: runs here measured 3.7–3.9×. The race detector's
// shadow memory would distort it, so race builds leave it out.
func TestPeakHeap50MiBItem(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and translates a 50 MiB chunk")
	}
	data := benchdata.ChunkV2(hugeChunkConfig())
	if len(data) > 50<<20 || len(data) < 45<<20 {
		t.Fatalf("generated item is %d bytes, want just under 50 MiB", len(data))
	}
	var events int
	var err error
	peak := peakHeap(func() {
		_, events, err = translate(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := hugeChunkConfig().Samples(); events != want {
		t.Fatalf("%d sample events translated, want %d", events, want)
	}
	ratio := float64(peak) / float64(len(data))
	t.Logf("item %.1f MiB, peak heap %.1f MiB = %.2f× the item", float64(len(data))/(1<<20), float64(peak)/(1<<20), ratio)
	if ratio >= 4 {
		t.Errorf("peak heap %.2f× the item size, want < 4×", ratio)
	}
	runtime.KeepAlive(data)
}

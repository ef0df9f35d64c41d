package profilesin

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/proccpu"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
)

// BenchmarkBuildReused is BenchmarkBuild through one builder reset between
// items, as a receiver's worker uses it.
func BenchmarkBuildReused(b *testing.B) {
	p := translatortest.DecodeBenchChunk(b, benchdata.LargeChunkConfig())
	bld := NewProfilesBuilder(ReceiveOptions{})
	b.ReportAllocs()
	cpu := proccpu.Self()
	for b.Loop() {
		bld.Reset(ReceiveOptions{})
		if bld.Add(DecodedProfile{Profile: p}) != len(p.Samples) {
			b.Fatal("samples lost")
		}
		_ = bld.Profiles()
	}
	b.ReportMetric(float64(proccpu.Self()-cpu)/float64(b.N), "cpu-ns/op")
}

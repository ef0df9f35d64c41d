package sentry

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/proccpu"
)

// BenchmarkDecoderReused decodes the 5.25 MB chunk (48,480 samples, 5,000
// stacks, 2,000 frames) through one Decoder, as a receiver's worker does:
// the arrays and interned strings of the previous payload are reused, so
// what is measured is the scan, not the first payload's allocations.
func BenchmarkDecoderReused(b *testing.B) {
	data := benchdata.ChunkV2(benchdata.LargeChunkConfig())
	var dec Decoder
	if _, err := dec.Decode(data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := proccpu.Self()
	for b.Loop() {
		if _, err := dec.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(proccpu.Self()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkValidate applies Relay's rules to the decoded 5.25 MB chunk.
func BenchmarkValidate(b *testing.B) {
	p, err := DecodeProfile(benchdata.ChunkV2(benchdata.LargeChunkConfig()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := proccpu.Self()
	for b.Loop() {
		if err := Validate(p, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(proccpu.Self()-cpu)/float64(b.N), "cpu-ns/op")
}

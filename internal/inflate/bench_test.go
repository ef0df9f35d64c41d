package inflate

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/proccpu"
)

// benchInputs are the envelopes the receiver inflates most: the 5.25 MB
// V2 chunk of a 60-s python profile and a 135 KB @sentry/node chunk, gzip'd
// as the SDKs do (compress/gzip's default level is zlib's, as theirs).
func benchInputs(tb testing.TB) []struct {
	name      string
	raw, body []byte
} {
	large := benchdata.Envelope("profile_chunk", "python", benchdata.ChunkV2(benchdata.LargeChunkConfig()))
	node := benchdata.EnvelopeUnsized("profile_chunk", "node", benchdata.ChunkV2(benchdata.NodeSDKChunkConfig()))
	return []struct {
		name      string
		raw, body []byte
	}{
		{"LargeChunk", large, compresstest.Bytes(tb, "gzip", large)},
		{"NodeChunk", node, compresstest.Bytes(tb, "gzip", node)},
	}
}

// withCPU runs bench and reports its CPU time per op (cpu-ns/op) beside the
// wall-time numbers.
func withCPU(bench func(b *testing.B)) func(b *testing.B) {
	return func(b *testing.B) {
		start := proccpu.Self()
		bench(b)
		b.ReportMetric(float64(proccpu.Self()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkGunzip inflates the same bodies with this package, klauspost's
// gzip reader (the receiver's decoder before) and compress/gzip, in one
// run; MB/s are of the inflated bytes.
func BenchmarkGunzip(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(in.name+"/Inflate", withCPU(func(b *testing.B) {
			var d Decoder
			var out []byte
			b.SetBytes(int64(len(in.raw)))
			for b.Loop() {
				var err error
				if out, err = d.Gunzip(out, in.body, 1<<30); err != nil {
					b.Fatal(err)
				}
			}
			if !bytes.Equal(out, in.raw) {
				b.Fatal("output differs")
			}
		}))
		kz, sz := new(kgzip.Reader), new(stdgzip.Reader)
		b.Run(in.name+"/Klauspost", withCPU(streamed(in.raw, in.body, kz.Reset, kz)))
		b.Run(in.name+"/Stdlib", withCPU(streamed(in.raw, in.body, sz.Reset, sz)))
	}
}

// streamed is the benchmark of a streaming gzip reader zr over body (reset
// for each op), copying out the len(raw) bytes it inflates.
func streamed(raw, body []byte, reset func(io.Reader) error, zr io.Reader) func(b *testing.B) {
	return func(b *testing.B) {
		out := bytes.NewBuffer(make([]byte, 0, len(raw)+512))
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			out.Reset()
			if err := reset(bytes.NewReader(body)); err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(out, zr); err != nil {
				b.Fatal(err)
			}
		}
	}
}

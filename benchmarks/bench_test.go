package benchmarks

import (
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// workerPath is the receiver's translate path for one item: decode,
// normalize, validate, build pdata. Like each of the receiver's workers, it
// decodes and builds through a Decoder and a ProfilesBuilder that it reuses
// from one item to the next.
type workerPath struct {
	decoder sentry.Decoder
	builder *profilesin.ProfilesBuilder
	opts    profilesin.ReceiveOptions
}

// translate returns the profiles of data and the number of Sentry sample
// events they hold.
func (t *workerPath) translate(data []byte) (pprofile.Profiles, int, error) {
	p, err := t.decoder.Decode(data)
	if err != nil {
		return pprofile.Profiles{}, 0, fmt.Errorf("decode: %w", err)
	}
	sentry.Normalize(p)
	if err := sentry.Validate(p, sentry.DefaultLimits()); err != nil {
		return pprofile.Profiles{}, 0, fmt.Errorf("validate: %w", err)
	}
	if t.builder == nil {
		t.builder = profilesin.NewProfilesBuilder(t.opts)
	} else {
		t.builder.Reset(t.opts)
	}
	n := t.builder.Add(profilesin.DecodedProfile{Profile: p, Payload: data})
	return t.builder.Profiles(), n, nil
}

// translate runs the translate path once, with nothing reused.
func translate(data []byte) (pprofile.Profiles, int, error) {
	var t workerPath
	return t.translate(data)
}

// protoSize is the size of pd as an OTLP protobuf request. The marshaler
// may rewrite its input, so it gets a copy.
func protoSize(tb testing.TB, pd pprofile.Profiles) int {
	tb.Helper()
	c := pprofile.NewProfiles()
	pd.CopyTo(c)
	buf, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(c)
	if err != nil {
		tb.Fatalf("marshal OTLP protobuf: %v", err)
	}
	return len(buf)
}

// BenchmarkDecode compares our decoder with encoding/json decoding the same
// 5.25 MB chunk into plain structs.
func BenchmarkDecode(b *testing.B) {
	data := benchdata.ChunkV2(benchdata.LargeChunkConfig())
	b.Run("EncodingJSON", func(b *testing.B) {
		benchmarkEncodingJSONDecode(b, data)
	})
	b.Run("Ours", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sentry.DecodeProfile(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchmarkEncodingJSONDecode(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var p jsonProfile
		if err := json.Unmarshal(data, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkTranslate runs the translate path on data next to the
// encoding/json decode of the same bytes, the target's reference, and
// reports the OTLP protobuf size of the result relative to the input.
func benchmarkTranslate(b *testing.B, data []byte) {
	pd, want, err := translate(data)
	if err != nil {
		b.Fatal(err)
	}
	ratio := float64(protoSize(b, pd)) / float64(len(data))
	b.Run("EncodingJSON", func(b *testing.B) {
		benchmarkEncodingJSONDecode(b, data)
	})
	b.Run("Ours", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var t workerPath
		for b.Loop() {
			_, n, err := t.translate(data)
			if err != nil {
				b.Fatal(err)
			}
			if n != want {
				b.Fatalf("%d sample events, want %d", n, want)
			}
		}
		b.ReportMetric(ratio, "proto/json")
	})
	// The grouped shape (group_samples: true): the samples of one stack,
	// thread and link as one Sample of timestamps.
	b.Run("OursGrouped", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		t := workerPath{opts: profilesin.ReceiveOptions{GroupSamples: true}}
		pd, _, err := t.translate(data)
		if err != nil {
			b.Fatal(err)
		}
		grouped := float64(protoSize(b, pd)) / float64(len(data))
		for b.Loop() {
			if _, n, err := t.translate(data); err != nil || n != want {
				b.Fatalf("%d sample events (want %d): %v", n, want, err)
			}
		}
		b.ReportMetric(grouped, "proto/json")
	})
	// The same with nothing kept from one item to the next: a receiver
	// without pooled workers, or the first item of each.
	b.Run("OursCold", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := translate(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTranslate is the receiver's translate path on the 5.25 MB chunk
// (target: ≥ 5× encoding/json's decode alone, < 60,000 allocations).
func BenchmarkTranslate(b *testing.B) {
	benchmarkTranslate(b, benchdata.ChunkV2(benchdata.LargeChunkConfig()))
}

// BenchmarkTranslateV1Cocoa is the translate path on a V1 cocoa profile:
// address-only native frames in 60 images, queue metadata, a transaction.
func BenchmarkTranslateV1Cocoa(b *testing.B) {
	benchmarkTranslate(b, benchdata.ProfileV1Cocoa(1))
}

// BenchmarkTranslateSmallChunk is the translate path on the ~70 KB chunk a
// real SDK sends for a lightly loaded service.
func BenchmarkTranslateSmallChunk(b *testing.B) {
	benchmarkTranslate(b, benchdata.ChunkV2(benchdata.SmallChunkConfig()))
}

// BenchmarkExport compares the exporter's path, pdata → V2 chunk JSON, with
// encoding/json.Marshal writing the same chunk from plain structs alone
// (target: ≥ 2×). The pdata is what the translate path makes of the 5.25 MB
// chunk; both sides count the input chunk's size as their bytes.
func BenchmarkExport(b *testing.B) {
	data := benchdata.ChunkV2(benchdata.LargeChunkConfig())
	pd, want, err := translate(data)
	if err != nil {
		b.Fatal(err)
	}
	var mirror jsonProfile
	if err := json.Unmarshal(data, &mirror); err != nil {
		b.Fatal(err)
	}
	b.Run("EncodingJSONMarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&mirror); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Ours", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			chunks, drops := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
			if len(drops) > 0 {
				b.Fatalf("drops: %v", drops)
			}
			n := 0
			for _, c := range chunks {
				buf = sentry.AppendChunkJSON(buf[:0], c.Profile)
				n += len(c.Profile.Samples)
			}
			if n != want {
				b.Fatalf("%d sample events exported, want %d", n, want)
			}
		}
	})
}

package translator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

func decodeBenchChunk(b *testing.B, cfg benchdata.ChunkConfig) *sentry.Profile {
	b.Helper()
	data := benchdata.ChunkV2(cfg)
	p, err := sentry.DecodeProfile(data)
	require.NoError(b, err)
	sentry.Normalize(p)
	require.NoError(b, sentry.Validate(p, sentry.DefaultLimits()))
	b.SetBytes(int64(len(data)))
	return p
}

// BenchmarkBuild measures the receiver's hot path on a busy 60 s chunk
// (5 MB: 48k samples, 5k stacks 20–80 deep, 2k frames, 8 threads).
func BenchmarkBuild(b *testing.B) {
	p := decodeBenchChunk(b, benchdata.LargeChunkConfig())
	b.ReportAllocs()
	for b.Loop() {
		bld := NewProfilesBuilder(ReceiveOptions{})
		if bld.Add(DecodedProfile{Profile: p}) != len(p.Samples) {
			b.Fatal("samples lost")
		}
		_ = bld.Profiles()
	}
}

// BenchmarkFromProfiles measures the exporter on the same chunk.
func BenchmarkFromProfiles(b *testing.B) {
	p := decodeBenchChunk(b, benchdata.LargeChunkConfig())
	pd := toProfiles([]DecodedProfile{{Profile: p}}, ReceiveOptions{})
	b.ReportAllocs()
	for b.Loop() {
		chunks, drops := FromProfiles(pd, ExportOptions{})
		if len(chunks) != 1 || len(drops) != 0 {
			b.Fatalf("%d chunks, drops %v", len(chunks), drops)
		}
	}
}

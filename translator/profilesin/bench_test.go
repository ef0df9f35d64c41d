package profilesin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// BenchmarkBuild measures the receiver's hot path on a busy 60 s chunk
// (5 MB: 48k samples, 5k stacks 20–80 deep, 2k frames, 8 threads).
func BenchmarkBuild(b *testing.B) {
	p := translatortest.DecodeBenchChunk(b, benchdata.LargeChunkConfig())
	b.ReportAllocs()
	for b.Loop() {
		bld := NewProfilesBuilder(ReceiveOptions{})
		if bld.Add(DecodedProfile{Profile: p}) != len(p.Samples) {
			b.Fatal("samples lost")
		}
		_ = bld.Profiles()
	}
}

// BenchmarkBuildV1 measures the receiver on transaction profiles: a
// generated cocoa profile (no idle sample) and a captured @sentry/browser
// 10 profile of an async workload (768 samples, 481 idle, which take the
// frames Sentry shows them with).
func BenchmarkBuildV1(b *testing.B) {
	browser, err := os.ReadFile(filepath.Join("..", "testdata", "browser10_captured_v1_async_long.json"))
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"cocoa", benchdata.ProfileV1Cocoa(1)},
		{"browser-idle", browser},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := sentry.DecodeProfile(bc.data)
			require.NoError(b, err)
			sentry.Normalize(p)
			require.NoError(b, sentry.Validate(p, sentry.DefaultLimits()))
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			for b.Loop() {
				bld := NewProfilesBuilder(ReceiveOptions{})
				if bld.Add(DecodedProfile{Profile: p}) != len(p.Samples) {
					b.Fatal("samples lost")
				}
				_ = bld.Profiles()
			}
		})
	}
}

package profilesout

import (
	"path"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// ebpfFixture is the collector's file-exporter output of a 30 s run of the
// OpenTelemetry eBPF profiler (see ../shared/fixtures/otlp/INDEX.md).
const ebpfFixture = "ebpf-profiler-b442421__python-node-go-load.otlp.jsonl"

// readOTLPRequests decodes every request of an OTLP JSON-lines fixture.
func readOTLPRequests(t testing.TB, name string) []pprofile.Profiles {
	t.Helper()
	var u pprofile.JSONUnmarshaler
	var out []pprofile.Profiles
	for i, line := range fixtures.OTLPLines(t, name) {
		pd, err := u.UnmarshalProfiles(line)
		require.NoError(t, err, "%s line %d", name, i+1)
		out = append(out, pd)
	}
	return out
}

// mergedRequests is every request merged into one, as the exporter's
// chunking merges what arrives within its flush interval.
func mergedRequests(t testing.TB, reqs []pprofile.Profiles) pprofile.Profiles {
	t.Helper()
	all := pprofile.NewProfiles()
	for _, pd := range reqs {
		cp := pprofile.NewProfiles()
		pd.CopyTo(cp)
		require.NoError(t, cp.MergeTo(all))
	}
	return all
}

// requireResolvableNativeFrames checks what a symbolicator needs: images of
// a chunk do not overlap, every frame that names its binary (package) lies
// in exactly the image of that binary, and every other frame with an
// address (kernel frames: their vmlinux mapping has no address range) lies
// in no image.
func requireResolvableNativeFrames(t testing.TB, p *sentry.Profile) {
	t.Helper()
	imgs := p.DebugMeta.Images
	for i := range imgs {
		for j := i + 1; j < len(imgs); j++ {
			a, b := imgs[i], imgs[j]
			require.False(t, a.ImageAddr < b.ImageAddr+b.ImageSize && b.ImageAddr < a.ImageAddr+a.ImageSize,
				"chunk %s: images %s [%#x+%#x) and %s [%#x+%#x) overlap", p.ChunkID,
				a.CodeFile, a.ImageAddr, a.ImageSize, b.CodeFile, b.ImageAddr, b.ImageSize)
		}
	}
	for fi, f := range p.Frames {
		if f.InstructionAddr == 0 {
			continue
		}
		var in []string
		for _, img := range imgs {
			if f.InstructionAddr >= img.ImageAddr && f.InstructionAddr-img.ImageAddr < img.ImageSize {
				in = append(in, img.CodeFile)
			}
		}
		if !slices.ContainsFunc(imgs, func(img sentry.Image) bool { return img.CodeFile == f.Package }) {
			require.Empty(t, in, "chunk %s frame %d (%s at %#x) has no image of its own but lies in one", p.ChunkID, fi, f.Function, f.InstructionAddr)
			continue
		}
		require.Equal(t, []string{f.Package}, in, "chunk %s frame %d (%s at %#x) must lie in its own image only", p.ChunkID, fi, f.Function, f.InstructionAddr)
	}
}

// chunkSpan is the time from a chunk's first sample to its last.
func chunkSpan(p *sentry.Profile) int64 {
	lo, hi := p.Samples[0].Timestamp, p.Samples[0].Timestamp
	for _, s := range p.Samples {
		lo, hi = min(lo, s.Timestamp), max(hi, s.Timestamp)
	}
	return hi - lo
}

func TestFromProfilesEBPFProfiler(t *testing.T) {
	reqs := readOTLPRequests(t, ebpfFixture)
	opts := func() ExportOptions {
		return ExportOptions{
			DefaultRelease: "load@1.0", DefaultEnvironment: "bench", InstanceID: "collector-a",
			ChunkWindow: 60e9, Platforms: NewPlatformMemory(1024),
		}
	}
	tests := []struct {
		name string
		// batches are the FromProfiles calls, in order, sharing one
		// PlatformMemory as the exporter's calls do.
		batches []pprofile.Profiles
		// maxChunksPerProfiler: 1 when the whole 30 s run is converted
		// at once (it fits in one 60 s window).
		maxChunksPerProfiler int
	}{
		{name: "every request on its own", batches: reqs, maxChunksPerProfiler: len(reqs)},
		{name: "all requests merged", batches: []pprofile.Profiles{mergedRequests(t, reqs)}, maxChunksPerProfiler: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts()
			in, out := 0, 0
			dropped := map[sentry.Reason]int{}
			platforms := map[string]map[string]bool{}
			chunksOf := map[string]int{}
			for _, pd := range tt.batches {
				in += samplecount.Events(pd)
				chunks, drops := FromProfiles(pd, o)
				requireValidChunks(t, chunks)
				out += sentOrDropped(chunks, drops)
				for _, d := range drops {
					dropped[d.Reason] += d.Samples
				}
				for _, c := range chunks {
					p := c.Profile
					requireResolvableNativeFrames(t, p)
					require.Equal(t, "load@1.0", p.Release, "chunk %s", p.ChunkID)
					require.Equal(t, "bench", p.Environment, "chunk %s", p.ChunkID)
					require.LessOrEqual(t, chunkSpan(p), int64(60e9), "chunk %s", p.ChunkID)
					if platforms[p.ProfilerID] == nil {
						platforms[p.ProfilerID] = map[string]bool{}
					}
					platforms[p.ProfilerID][p.Platform] = true
					chunksOf[p.ProfilerID]++
					for _, f := range p.Frames {
						if f.InstructionAddr != 0 && f.Function == "" && f.Package != "" {
							require.Equal(t, path.Base(f.Package), f.Module, "an address-only frame names its binary as module")
						}
					}
				}
			}
			require.Equal(t, 1099, in, "the fixture's sample count (INDEX.md)")
			require.Equal(t, in, out, "samples in = samples sent + samples dropped")
			for r := range dropped {
				require.Equal(t, sentry.ReasonNotEnoughSamples, r, "the run drops only threads Relay would drop")
			}
			for id, ps := range platforms {
				require.Len(t, ps, 1, "profiler %s has one platform, got %v", id, ps)
				require.LessOrEqual(t, chunksOf[id], tt.maxChunksPerProfiler, "profiler %s", id)
			}
			t.Logf("%d samples: %d sent in chunks of %d profilers, dropped %v", in, in-sum(dropped), len(platforms), dropped)
		})
	}
}

func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

package profilesin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// methodTrace is nodeChunk as an exact method trace: every sample carries
// its wall time, some a CPU time (0: none measured).
func methodTrace() *sentry.Profile {
	p := nodeChunk()
	p.SampleWallNS = []uint64{4_000, 3_000, 2_000, 1_000, 5_000}
	p.SampleCPUNS = []uint64{1_000, 0, 2_000, 0, 500}
	return p
}

// samplesReadBack counts pd's samples by sample type by reading pd, as a
// consumer of the Profiles would: the oracle for SamplesByType.
func samplesReadBack(pd pprofile.Profiles) map[string]int {
	strs := pd.Dictionary().StringTable()
	counts := map[string]int{}
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				n := 0
				for _, s := range p.Samples().All() {
					n += samplecount.OfSample(s)
				}
				st := p.SampleType()
				counts[strs.At(int(st.TypeStrindex()))+":"+strs.At(int(st.UnitStrindex()))] += n
			}
		}
	}
	return counts
}

func TestSamplesByTypeMatchesTheProfiles(t *testing.T) {
	empty := nodeChunk()
	empty.Samples = nil
	tests := []struct {
		name  string
		items []*sentry.Profile
		group bool
		want  map[string]int
	}{
		{"one sample per Sentry sample", []*sentry.Profile{nodeChunk()}, false, map[string]int{"wall:nanoseconds": 5}},
		{"grouped", []*sentry.Profile{nodeChunk()}, true, map[string]int{"samples:count": 5}},
		{"method trace: CPU view of the samples with a CPU time", []*sentry.Profile{methodTrace()}, false,
			map[string]int{"wall:nanoseconds": 5, "cpu:nanoseconds": 3}},
		{"method trace grouped: every timestamp in the CPU view", []*sentry.Profile{methodTrace()}, true,
			map[string]int{"wall:nanoseconds": 5, "cpu:nanoseconds": 5}},
		{"an empty item is named with 0", []*sentry.Profile{empty}, false, map[string]int{"wall:nanoseconds": 0}},
		{"items add up", []*sentry.Profile{nodeChunk(), methodTrace(), empty}, false,
			map[string]int{"wall:nanoseconds": 10, "cpu:nanoseconds": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewProfilesBuilder(ReceiveOptions{GroupSamples: tt.group})
			// A used builder: the counts start again at Reset.
			b.Add(DecodedProfile{Profile: nodeChunk()})
			b.Reset(ReceiveOptions{GroupSamples: tt.group})
			for _, p := range tt.items {
				b.Add(DecodedProfile{Profile: p})
			}
			got := b.SamplesByType()
			pd := b.Profiles()
			assert.Equal(t, tt.want, got)
			assert.Equal(t, samplesReadBack(pd), got)
		})
	}
}

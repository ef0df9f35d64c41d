package benchmarks

import (
	"fmt"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
)

// issueProtoRatio is issue 7's size target: the OTLP protobuf request of a
// translated chunk is at most a fifth of the Sentry JSON it came from.
const issueProtoRatio = 0.20

// TestProtoSizeRatio guards the size of translated profiles, in both sample
// shapes. A case that meets issueProtoRatio asserts it; a case that does not
// says why (the reason BENCHMARKS.md gives) and asserts the bound reached
// today so that a regression fails. A case marked as missing the target
// that meets it fails too, so that the mark and BENCHMARKS.md stay true.
func TestProtoSizeRatio(t *testing.T) {
	const (
		// The grouped shape of a 60 s chunk: 8-byte timestamps, 2-byte
		// location indices and the service attributes every Sample
		// carries for older OTLP readers (0.2048 before them).
		groupedTimestamps = "8-byte timestamps and per-Sample service attributes"
		// The default shape writes one Sample per Sentry sample, with
		// its wall time: about twice the grouped size by construction.
		oneSamplePerEvent = "one Sample message per Sentry sample (the default shape)"
		// 68 KB: the resource, the dictionary's zero entries and one
		// string per frame weigh more than in a full chunk.
		fixedCosts = "fixed costs of a small chunk"
	)
	type shape struct {
		bound  float64 // asserted: the target, or today's bound when whyNot is set
		whyNot string
	}
	tests := []struct {
		name               string
		data               []byte
		grouped, perSample shape
	}{
		{"large chunk", benchdata.ChunkV2(benchdata.LargeChunkConfig()), shape{0.22, groupedTimestamps}, shape{0.42, oneSamplePerEvent}},
		{"V1 cocoa", benchdata.ProfileV1Cocoa(1), shape{issueProtoRatio, ""}, shape{0.31, oneSamplePerEvent}},
		{"small chunk", benchdata.ChunkV2(benchdata.SmallChunkConfig()), shape{0.45, fixedCosts}, shape{0.52, fixedCosts}},
	}
	for _, tt := range tests {
		for _, group := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/grouped=%t", tt.name, group), func(t *testing.T) {
				tr := workerPath{opts: profilesin.ReceiveOptions{GroupSamples: group}}
				pd, events, err := tr.translate(tt.data)
				if err != nil {
					t.Fatal(err)
				}
				if events == 0 || profilestest.SampleEvents(pd) != events {
					t.Fatalf("pdata holds %d sample events, the builder reported %d", profilestest.SampleEvents(pd), events)
				}
				size := protoSize(t, pd)
				ratio := float64(size) / float64(len(tt.data))
				want := tt.perSample
				if group {
					want = tt.grouped
				}
				t.Logf("JSON %d bytes, OTLP protobuf %d bytes: %.4f (target ≤ %.2f; %s)",
					len(tt.data), size, ratio, issueProtoRatio, orMet(want.whyNot))
				switch {
				case want.whyNot == "" && ratio > issueProtoRatio:
					t.Errorf("OTLP protobuf is %.4f of the JSON, the target is ≤ %.2f", ratio, issueProtoRatio)
				case want.whyNot != "" && ratio <= issueProtoRatio:
					t.Errorf("OTLP protobuf is %.4f of the JSON: the %.2f target holds now; assert it for this case and update BENCHMARKS.md", ratio, issueProtoRatio)
				case ratio > want.bound:
					t.Errorf("OTLP protobuf is %.4f of the JSON, want ≤ %.2f (missed target: %s)", ratio, want.bound, want.whyNot)
				}
			})
		}
	}
}

func orMet(whyNot string) string {
	if whyNot == "" {
		return "met, asserted"
	}
	return "missed: " + whyNot
}

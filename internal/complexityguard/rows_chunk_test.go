package complexityguard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// The profile chunk's word-at-a-time reads: a stack's frame indices,
// found 64 bytes at a time, and the samples' timestamps, in the shape SDKs
// write them. Both are the client's to make as long as it likes.

// chunkOf is a V2 chunk of the given samples, stacks and frames (JSON
// array bodies).
func chunkOf(samples, stacks, frames string) []byte {
	return []byte(`{"version":"2","profiler_id":"4d229f1d3807421ba62a5f8bc295d836","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814",` +
		`"platform":"python","client_sdk":{"name":"sentry.python","version":"2.68.0"},` +
		`"profile":{"samples":[` + samples + `],"stacks":[` + stacks + `],"frames":[` + frames + `]}}`)
}

// chunkDeepStack is a chunk of one stack n frame indices deep, of one to
// four digits, over 2,000 frames.
func chunkDeepStack(n int) []byte {
	var stack strings.Builder
	for i := range n {
		if i > 0 {
			stack.WriteByte(',')
		}
		fmt.Fprintf(&stack, "%d", (i*7919)%2000)
	}
	frames := strings.TrimSuffix(strings.Repeat(`{"function":"f","lineno":1},`, 2000), ",")
	samples := `{"stack_id":0,"thread_id":"1","timestamp":1795000000.000164},{"stack_id":0,"thread_id":"1","timestamp":1795000000.010164}`
	return chunkOf(samples, "["+stack.String()+"]", frames)
}

// chunkSampleTimes is a chunk of n samples on two threads, their
// timestamps with fractions of one to nine digits.
func chunkSampleTimes(n int) []byte {
	var samples strings.Builder
	for i := range n {
		if i > 0 {
			samples.WriteByte(',')
		}
		frac := fmt.Sprintf("%09d", i*7919%1_000_000_000)[:1+i%9]
		fmt.Fprintf(&samples, `{"stack_id":%d,"thread_id":"%d","timestamp":17950%05d.%s}`, i%2, i%2, i/100, frac)
	}
	return chunkOf(samples.String(), "[0],[0,1]", `{"function":"a"},{"function":"b"}`)
}

func chunkRows() []row {
	decode := func(tb testing.TB, in []byte) (int64, int64) {
		p, err := sentry.DecodeProfile(in)
		if err != nil {
			tb.Errorf("decode: %v", err)
			return 0, 0
		}
		n := int64(len(p.Samples) + len(p.Stacks.FrameIndices))
		return n, n
	}
	return []row{
		{
			name: "chunk_stack_depth", dimension: "frame indices of one stack", n: 5000, maxN: 1 << 20, clock: ThreadClock,
			fuzz:  []string{"translator/sentry.FuzzStackIndices", "translator/sentry.FuzzDigits"},
			build: directRow(chunkDeepStack, decode),
		},
		{
			name: "chunk_sample_times", dimension: "samples with timestamps as SDKs write them", n: 2000, maxN: 1 << 18, clock: ThreadClock,
			fuzz:  []string{"translator/internal/sentrytime.FuzzScan", "translator/sentry.FuzzDigits"},
			build: directRow(chunkSampleTimes, decode),
		},
	}
}

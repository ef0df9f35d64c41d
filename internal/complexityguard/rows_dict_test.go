package complexityguard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// The builder's dictionary finds a frame's Location by a hash of what most
// frames differ in (function, file, address, line) and confirms it on the
// whole frame. A client can send frames that agree in those and differ in
// anything else: each must still cost the same.

// chunkSamePlace is a chunk of n frames at one function, file and line,
// differing in the column, the module or the symbolication data, or at
// one function and file, differing in the line, their instruction address
// the constant a multiply step of the hash once folded it with (which made
// the product, and with it the line, nothing); each frame a stack of its
// own.
func chunkSamePlace(n int) []byte {
	var frames, stacks, samples strings.Builder
	for i := range n {
		if i > 0 {
			frames.WriteByte(',')
			stacks.WriteByte(',')
			samples.WriteByte(',')
		}
		if i%4 == 3 {
			fmt.Fprintf(&frames, `{"function":"handle","filename":"app.py","lineno":%d,"instruction_addr":"0xe7037ed1a0b428db"}`, i)
			fmt.Fprintf(&stacks, "[%d]", i)
			fmt.Fprintf(&samples, `{"stack_id":%d,"thread_id":"1","timestamp":1795000000.%06d}`, i, i)
			continue
		}
		frames.WriteString(`{"function":"handle","filename":"app.py","lineno":7,`)
		switch i % 3 {
		case 0:
			fmt.Fprintf(&frames, `"colno":%d}`, i)
		case 1:
			fmt.Fprintf(&frames, `"module":"m%d"}`, i)
		default:
			fmt.Fprintf(&frames, `"data":{"n":%d}}`, i)
		}
		fmt.Fprintf(&stacks, "[%d]", i)
		fmt.Fprintf(&samples, `{"stack_id":%d,"thread_id":"1","timestamp":1795000000.%06d}`, i, i)
	}
	return chunkOf(samples.String(), stacks.String(), frames.String())
}

func dictRows() []row {
	build := func(tb testing.TB, in []byte) (int64, int64) {
		p, err := sentry.DecodeProfile(in)
		if err != nil {
			tb.Errorf("decode: %v", err)
			return 0, 0
		}
		b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{})
		b.Add(profilesin.DecodedProfile{Profile: p})
		locations := int64(b.Profiles().Dictionary().LocationTable().Len())
		return locations, locations
	}
	return []row{
		{
			name: "profile_frames_same_place", dimension: "frames alike but for the column, module, data or line", n: 1000, maxN: 1 << 16, clock: ThreadClock,
			fuzz:  []string{"translator/profilesin.FuzzToProfiles"},
			build: directRow(chunkSamePlace, build),
		},
	}
}

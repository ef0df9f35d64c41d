package android

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/perfetto/perfettotest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestPerfettoChunk maps a generated Perfetto trace under a real chunk's
// metadata: the metadata (from Sentry's Android SDK, in the shared
// fixtures: the trace itself is not there) names the profiler and the
// release; each PerfSample is a sample at its realtime on its thread, Java
// frames by name, native ones with their mapping as a debug image.
func TestPerfettoChunk(t *testing.T) {
	env := fixtures.Read(t, "relay__relay-profiling_tests_fixtures_android_perfetto_profile_chunk.envelope.HEAD_ONLY.txt")
	lines := bytes.SplitN(env, []byte("\n"), 3)
	require.Len(t, lines, 3)
	metaLen, ok := PerfettoMetaLength(lines[1])
	require.True(t, ok, "item header %s", lines[1])
	// The fixture's measurements were trimmed, so meta_length overshoots:
	// the metadata is the JSON object that starts the payload.
	meta := lines[2][:min(metaLen, len(lines[2]))]
	if end := bytes.LastIndexByte(meta, '}'); end >= 0 {
		meta = meta[:end+1]
	}

	p, err := DecodePerfettoChunk(meta, perfettotest.Trace(), time.Now(), perfetto.DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, sentry.VersionV2, p.Version)
	assert.Equal(t, "814b081c638b4ad982ae351547bfe499", p.ProfilerID)
	assert.Equal(t, "c3b09c0608844f558eaf6e65df6b9cdf", p.ChunkID)
	assert.Equal(t, "sentry.java.android", p.ClientSDK.Name)
	require.Len(t, p.Samples, 3)
	assert.Equal(t, []int64{1_795_000_000_000_000_010, 1_795_000_000_000_000_020, 1_795_000_000_000_000_030},
		[]int64{p.Samples[0].Timestamp, p.Samples[1].Timestamp, p.Samples[2].Timestamp})
	assert.Equal(t, []string{"42", "43", "42"}, []string{p.Samples[0].ThreadID, p.Samples[1].ThreadID, p.Samples[2].ThreadID})

	leaf := p.Frames[p.Stacks.At(int(p.Samples[0].StackID))[0]]
	assert.Equal(t, sentry.Frame{Function: "com.example.App.render", Platform: "java"}, leaf, "a Java frame of boot.oat")
	native := p.Frames[p.Stacks.At(int(p.Samples[0].StackID))[1]]
	assert.Equal(t, "libc.so", native.Package)
	assert.Equal(t, uint64(0x1234), native.InstructionAddr)
	require.NotEmpty(t, p.DebugMeta.Images)
	img := p.DebugMeta.Images[len(p.DebugMeta.Images)-1]
	assert.Equal(t, sentry.Image{Type: "elf", CodeFile: "libc.so", CodeID: "0a1b2c"}, img)
	assert.Equal(t, p.Samples[0].StackID, p.Samples[2].StackID, "one stack for the same callstack")

	pd := profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{})
	translatortest.RequireValidPdata(t, pd)
	assert.Equal(t, 3, samplecount.Events(pd))
}

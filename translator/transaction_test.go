package translator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestReceiveLinksV2: a chunk's samples link to the innermost span of its
// profiler on their thread (from the span index), samples outside every
// span get none, and samples that differ only in their link stay apart.
func TestReceiveLinksV2(t *testing.T) {
	const (
		profiler = "6f1b0c3a9e2d4c8fb1a27d5e3c9f0a41"
		start    = int64(1_795_000_000_000_000_000)
	)
	trace := pcommon.TraceID{0xa1}
	span := func(id byte, thread string, from, to int64) spanindex.Span {
		return spanindex.Span{TraceID: trace, SpanID: pcommon.SpanID{id}, SegmentID: pcommon.SpanID{1},
			ProfilerID: profiler, ThreadID: thread, Start: uint64(start + from), End: uint64(start + to)}
	}
	index := spanindex.New(spanindex.Limits{})
	index.Add(time.Now(), []spanindex.Span{
		span(1, "0", 10, 100), // the segment
		span(2, "", 20, 60),   // a child: the segment's thread
		span(3, "5", 0, 200),  // another thread's span
	})
	samples := []struct {
		thread string
		at     int64
		want   byte // span id, 0 for none
	}{
		{"0", 0, 0}, {"0", 15, 1}, {"0", 30, 2}, {"0", 40, 2}, {"0", 70, 1}, {"0", 150, 0},
		{"5", 30, 3}, {"6", 30, 0},
	}
	p := &sentry.Profile{
		Version: sentry.VersionV2, Platform: "node", ProfilerID: profiler,
		ChunkID: "c2d4e6f8a0b24c6e8f0a1b3c5d7e9f10",
		Frames:  []sentry.Frame{{Function: "f"}},
		Stacks:  stacksOf([]int64{0}),
	}
	for _, s := range samples {
		p.Samples = append(p.Samples, sentry.Sample{ThreadID: s.thread, Timestamp: start + s.at})
	}

	b := NewProfilesBuilder(ReceiveOptions{})
	timeline := index.Timeline(time.Now(), profiler, uint64(start), uint64(start+150))
	require.NotNil(t, timeline)
	b.Add(DecodedProfile{Profile: p, Spans: timeline})
	assert.Equal(t, 5, b.LinkedSampleCount())
	pd := b.Profiles()
	requireValidPdata(t, pd)

	prof := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	got := map[int64]byte{}
	for _, s := range prof.Samples().All() {
		var id byte
		if s.LinkIndex() > 0 {
			l := pd.Dictionary().LinkTable().At(int(s.LinkIndex()))
			assert.Equal(t, trace, l.TraceID())
			id = l.SpanID()[0]
		}
		thread := sampleAttrs(t, pd, s)["thread.id"].(int64)
		for _, ts := range s.TimestampsUnixNano().All() {
			got[thread*1000+int64(ts)-start] = id
		}
	}
	for _, s := range samples {
		assert.Equal(t, s.want, got[mustInt(s.thread)*1000+s.at], "thread %s at %d", s.thread, s.at)
	}
	assert.Equal(t, len(samples), prof.Samples().Len(), "one Sample per Sentry sample")
}

// TestReceiveLinksV2WithoutSpans: no lookup, or a profiler the index does
// not know, leaves the chunk as it was: no links.
func TestReceiveLinksV2WithoutSpans(t *testing.T) {
	p := nodeChunk()
	b := NewProfilesBuilder(ReceiveOptions{})
	b.Add(DecodedProfile{Profile: p, Spans: spanindex.New(spanindex.Limits{}).Timeline(time.Now(), p.ProfilerID, 0, ^uint64(0))})
	assert.Zero(t, b.LinkedSampleCount())
	pd := b.Profiles()
	assert.Equal(t, 1, pd.Dictionary().LinkTable().Len(), "only the zero link")
}

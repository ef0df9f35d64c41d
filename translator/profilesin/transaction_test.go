package profilesin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/spanindex"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
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
	translatortest.RequireValidPdata(t, pd)

	prof := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	got := map[int64]byte{}
	for _, s := range prof.Samples().All() {
		var id byte
		if s.LinkIndex() > 0 {
			l := pd.Dictionary().LinkTable().At(int(s.LinkIndex()))
			assert.Equal(t, trace, l.TraceID())
			id = l.SpanID()[0]
		}
		thread := translatortest.SampleAttrs(t, pd, s)["thread.id"].(int64)
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

// profilerSpans is a SpanSource that records what it is asked and knows
// the spans of profiler "p" only.
type profilerSpans struct {
	asked    bool
	from, to uint64
}

func (s *profilerSpans) ProfilerSpans(profilerID string, from, to uint64) SpanLookup {
	s.asked, s.from, s.to = true, from, to
	if profilerID != "p" {
		return nil
	}
	return oneSpan{}
}

// oneSpan is a SpanLookup with one span on every thread at every time.
type oneSpan struct{}

func (oneSpan) SpanAt(string, uint64) (pcommon.TraceID, pcommon.SpanID, bool) {
	return pcommon.TraceID{1}, pcommon.SpanID{1}, true
}

func TestChunkSpans(t *testing.T) {
	chunk := func(version, profiler string, timestamps ...int64) *sentry.Profile {
		p := &sentry.Profile{Version: version, ProfilerID: profiler}
		for _, ts := range timestamps {
			p.Samples = append(p.Samples, sentry.Sample{Timestamp: ts})
		}
		return p
	}
	tests := []struct {
		name     string
		noSource bool
		profile  *sentry.Profile
		// asked: the source is asked for [from, to]; linked: a lookup comes back.
		asked, linked bool
		from, to      uint64
	}{
		{name: "a chunk of the profiler, its range in any order", profile: chunk(sentry.VersionV2, "p", 15, 12, 14), asked: true, linked: true, from: 12, to: 15},
		{name: "a chunk of a profiler the source does not know", profile: chunk(sentry.VersionV2, "q", 12, 15), asked: true, from: 12, to: 15},
		{name: "samples before the epoch start the range at 0", profile: chunk(sentry.VersionV2, "p", -5, 10), asked: true, linked: true, from: 0, to: 10},
		{name: "no source", noSource: true, profile: chunk(sentry.VersionV2, "p", 12)},
		{name: "a V1 profile", profile: chunk(sentry.VersionV1, "p", 12)},
		{name: "no profiler id", profile: chunk(sentry.VersionV2, "", 12)},
		{name: "no samples", profile: chunk(sentry.VersionV2, "p")},
		{name: "every sample before the epoch", profile: chunk(sentry.VersionV2, "p", -5, -1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &profilerSpans{}
			var got SpanLookup
			if tt.noSource {
				got = ChunkSpans(nil, tt.profile)
			} else {
				got = ChunkSpans(src, tt.profile)
			}
			assert.Equal(t, tt.linked, got != nil)
			assert.Equal(t, tt.asked, src.asked)
			assert.Equal(t, [2]uint64{tt.from, tt.to}, [2]uint64{src.from, src.to})
		})
	}
}

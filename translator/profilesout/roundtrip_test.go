package profilesout

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// sentryCase is one profile item to send through the round trip.
type sentryCase struct {
	name string
	item profilesin.DecodedProfile
}

// fixtureCases collects the sample-format profiles of the shared fixtures
// (the JSON files and the profile items inside the envelopes) and of
// testdata/. Payloads that are not sample-format profiles (Android traces,
// the obsolete cocoa format, SDK serialization snippets) fail to decode or
// validate and are logged, not tested: the receiver rejects them too.
func fixtureCases(t *testing.T) []sentryCase {
	t.Helper()
	valid, _ := allFixtureCases(t)
	return valid
}

// allFixtureCases returns the decodable fixtures Relay accepts and, apart,
// those it rejects.
func allFixtureCases(t *testing.T) (cases, rejected []sentryCase) {
	t.Helper()
	add := func(name string, payload []byte, tx *sentrytrace.Segment) {
		p, err := sentry.DecodeProfile(payload)
		if err != nil {
			t.Logf("%s: not a sample-format profile: %v", name, err)
			return
		}
		sentry.Normalize(p)
		if err := sentry.Validate(p, sentry.DefaultLimits()); err != nil {
			t.Logf("%s: Relay would reject it: %v", name, err)
			rejected = append(rejected, sentryCase{name: name, item: profilesin.DecodedProfile{Profile: p, Transaction: tx, Payload: payload}})
			return
		}
		cases = append(cases, sentryCase{name: name, item: profilesin.DecodedProfile{Profile: p, Transaction: tx, Payload: payload}})
	}

	files := fixtures.Files(t, ".json", ".envelope")
	local, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, local, "testdata holds the project's own profiles")
	files = append(files, local...)
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		name := filepath.Base(path)
		if !strings.HasSuffix(path, ".envelope") {
			add(name, data, nil)
			continue
		}
		_, items, err := envelope.Parse(data, envelope.Limits{})
		require.NoError(t, err, name)
		var tx *sentrytrace.Segment
		for _, it := range items {
			if it.Header.Type == "transaction" {
				tx, err = sentrytrace.DecodeTransaction(it.Payload)
				require.NoError(t, err, name)
			}
		}
		for i, it := range items {
			if it.Header.Type == "profile" || it.Header.Type == "profile_chunk" {
				add(name+"#"+string(rune('0'+i)), it.Payload, tx)
			}
		}
	}
	return cases, rejected
}

// TestRejectedFixturesStillConvert sends the fixtures Relay rejects (bad
// indices, missing metadata) through both directions: the builder skips
// what is out of range, and only valid pdata and valid chunks come out.
func TestRejectedFixturesStillConvert(t *testing.T) {
	_, rejected := allFixtureCases(t)
	require.NotEmpty(t, rejected)
	for _, tc := range rejected {
		t.Run(tc.name, func(t *testing.T) {
			pd := profilestest.ToProfiles([]profilesin.DecodedProfile{tc.item}, profilesin.ReceiveOptions{KeepOriginalPayload: true})
			translatortest.RequireValidPdata(t, pd)
			chunks, drops := FromProfiles(pd, ExportOptions{})
			requireValidChunks(t, chunks)
			assert.Equal(t, samplecount.Events(pd), sentOrDropped(chunks, drops), "every event is either sent or counted as dropped")
		})
	}
}

// resolvedSample is a Sentry sample with its stack resolved to frames: what
// must survive a round trip whatever the frame and stack numbering.
type resolvedSample struct {
	thread string
	micros int64
	frames []sentry.Frame
}

func resolveSamples(p *sentry.Profile) []resolvedSample {
	start := int64(0)
	if p.Version != sentry.VersionV2 {
		start = p.Timestamp.UnixNano()
	}
	out := make([]resolvedSample, 0, len(p.Samples))
	for _, s := range p.Samples {
		ts := s.Timestamp
		if p.Version != sentry.VersionV2 {
			ts = start + int64(s.ElapsedSinceStartNS)
		}
		var frames []sentry.Frame
		for _, f := range p.Stacks.At(int(s.StackID)) {
			frames = append(frames, p.Frames[f])
		}
		out = append(out, resolvedSample{thread: s.ThreadID, micros: ts / 1e3, frames: frames})
	}
	slices.SortStableFunc(out, func(a, b resolvedSample) int {
		return cmp.Or(cmp.Compare(a.micros, b.micros), cmp.Compare(a.thread, b.thread),
			cmp.Compare(len(a.frames), len(b.frames)))
	})
	return out
}

func threadMetadataMap(p *sentry.Profile) map[string]sentry.ThreadMetadata {
	m := map[string]sentry.ThreadMetadata{}
	for _, tm := range p.ThreadMetadata {
		m[tm.ThreadID] = tm
	}
	return m
}

// absoluteMeasurements turns V1 elapsed_since_start_ns into V2 timestamps.
func absoluteMeasurements(p *sentry.Profile) []sentry.Measurement {
	if p.Version == sentry.VersionV2 {
		return p.Measurements
	}
	start := p.Timestamp.UnixNano()
	out := slices.Clone(p.Measurements)
	for i := range out {
		out[i].Values = slices.Clone(out[i].Values)
		for j := range out[i].Values {
			v := &out[i].Values[j]
			v.Timestamp, v.ElapsedSinceStartNS = start+int64(v.ElapsedSinceStartNS), 0
		}
	}
	return out
}

func TestRoundTripSentryToPdataToSentry(t *testing.T) {
	cases := fixtureCases(t)
	require.NotEmpty(t, cases)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.item.Profile
			pd := profilestest.ToProfiles([]profilesin.DecodedProfile{tc.item}, profilesin.ReceiveOptions{})
			translatortest.RequireValidPdata(t, pd)
			require.Equal(t, len(in.Samples), samplecount.Events(pd), "every sample event is kept")

			if tc.item.Transaction != nil {
				linked := 0
				for _, s := range pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().All() {
					if s.LinkIndex() > 0 {
						linked += s.TimestampsUnixNano().Len()
					}
				}
				assert.Equal(t, len(in.Samples), linked, "the envelope's transaction links every sample")
			}

			chunks, drops := FromProfiles(pd, ExportOptions{})
			require.Empty(t, drops)
			require.Len(t, chunks, 1, "a validated profile spans at most 66 s")
			requireValidChunks(t, chunks)
			out := chunks[0].Profile

			assert.Equal(t, sentry.VersionV2, out.Version)
			if in.Version == sentry.VersionV2 {
				assert.Equal(t, in.ProfilerID, out.ProfilerID)
				assert.Equal(t, in.ChunkID, out.ChunkID)
			} else {
				assert.Equal(t, in.EventID, out.ChunkID, "a V1 profile's chunk is named by its event_id")
				assert.Equal(t, in.EventID, out.ProfilerID, "a V1 profile is its own profiler session")
			}
			assert.Equal(t, in.Platform, out.Platform)
			assert.Equal(t, in.Release, out.Release)
			assert.Equal(t, in.Environment, out.Environment)
			assert.Equal(t, in.Dist, out.Dist)
			assert.Equal(t, in.DebugMeta, out.DebugMeta)
			assert.Equal(t, absoluteMeasurements(in), out.Measurements)
			assert.Equal(t, threadMetadataMap(in), threadMetadataMap(out))
			assert.ElementsMatch(t, in.QueueMetadata, out.QueueMetadata)
			assert.Equal(t, sentry.ClientSDK{Name: DefaultSDKName, Version: moduleVersion()}, out.ClientSDK)

			want, got := resolveSamples(in), resolveSamples(out)
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i], got[i], "sample %d", i)
			}
			for i, s := range out.Samples {
				want, got := sampleExtras(in, s), [2]string{s.QueueAddress, s.State}
				assert.Equal(t, want, got, "sample %d queue and state", i)
			}
			assert.Subset(t, in.Frames, out.Frames, "no frame is invented")
		})
	}
}

// sampleExtras finds the queue address and state the input had for the
// output sample's thread and time.
func sampleExtras(in *sentry.Profile, s sentry.Sample) [2]string {
	start := int64(0)
	if in.Version != sentry.VersionV2 {
		start = in.Timestamp.UnixNano()
	}
	for _, x := range in.Samples {
		ts := x.Timestamp
		if in.Version != sentry.VersionV2 {
			ts = start + int64(x.ElapsedSinceStartNS)
		}
		if x.ThreadID == s.ThreadID && ts == s.Timestamp {
			return [2]string{x.QueueAddress, x.State}
		}
	}
	return [2]string{"?", "?"}
}

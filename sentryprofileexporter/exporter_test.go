package sentryprofileexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// sampleEvents is a profile's content as a multiset: one key per sample, made
// of its thread, its absolute time and its frames, leaf first.
type sampleEvents map[string]int

func frameKey(f sentry.Frame) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%d:%d|%#x", f.Function, f.Module, f.Package, f.Filename, f.AbsPath, f.Lineno, f.Colno, f.InstructionAddr)
}

// add adds the samples of p to ev. V1 times count from the profile
// timestamp; V2 times are absolute.
func (ev sampleEvents) add(p *sentry.Profile) {
	var base int64
	if p.Version == sentry.VersionV1 && !p.Timestamp.IsZero() {
		base = p.Timestamp.UnixNano()
	}
	for _, s := range p.Samples {
		ts := s.Timestamp
		if p.Version == sentry.VersionV1 {
			ts = base + int64(s.ElapsedSinceStartNS)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "thread=%s t=%d", s.ThreadID, ts)
		for _, fi := range p.Stacks.At(int(s.StackID)) {
			b.WriteString(" > ")
			b.WriteString(frameKey(p.Frames[fi]))
		}
		ev[b.String()]++
	}
}

func (ev sampleEvents) total() int {
	n := 0
	for _, c := range ev {
		n += c
	}
	return n
}

// acceptedProfiles decodes the profile items of a fixture the way the
// receiver does (decode, normalize, validate), or says why it is not one
// Sentry would accept.
func acceptedProfiles(t *testing.T, path string) ([]profilesin.DecodedProfile, string) {
	t.Helper()
	data := fixtures.Read(t, filepath.Base(path))
	var payloads [][]byte
	if strings.HasSuffix(path, ".envelope") {
		// A V1 profile's transaction only adds span links, which a chunk
		// does not carry: the profile items are all this test needs.
		_, items, err := envelope.Parse(data, envelope.Limits{})
		require.NoError(t, err)
		for _, it := range items {
			if it.Header.Type == "profile" || it.Header.Type == itemTypeProfileChunk {
				payloads = append(payloads, it.Payload)
			}
		}
	} else {
		payloads = append(payloads, data)
	}
	var items []profilesin.DecodedProfile
	for _, payload := range payloads {
		p, err := sentry.DecodeProfile(payload)
		if err != nil {
			return nil, "not a sample-format profile: " + err.Error()
		}
		sentry.Normalize(p)
		if err := sentry.Validate(p, sentry.DefaultLimits()); err != nil {
			return nil, "Relay would reject it: " + err.Error()
		}
		items = append(items, profilesin.DecodedProfile{Profile: p, Payload: payload})
	}
	if len(items) == 0 {
		return nil, "holds no profile item"
	}
	return items, ""
}

// TestFixturesArriveValidAndEqual sends every shared fixture Sentry accepts
// through receiver translation → pdata → this exporter → the fake Relay, and
// compares what arrives with the input, sample by sample.
func TestFixturesArriveValidAndEqual(t *testing.T) {
	relay := newFakeRelay(t, nil)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	exp := startExporter(t, cfg, nil)

	exercised := 0
	for _, path := range fixtures.Files(t, ".json", ".envelope") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			items, why := acceptedProfiles(t, path)
			if items == nil {
				t.Skip(why)
			}
			exercised++
			want := sampleEvents{}
			b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{ServiceName: "fixture"})
			for _, it := range items {
				want.add(it.Profile)
				b.Add(it)
			}
			before := len(relay.envelopes())
			require.NoError(t, exp.ConsumeProfiles(context.Background(), b.Profiles()))

			got := sampleEvents{}
			envs := relay.envelopes()[before:]
			require.NotEmpty(t, envs)
			for _, e := range envs {
				for _, c := range e.chunks {
					assert.Equal(t, items[0].Profile.Platform, c.Platform)
					got.add(c)
				}
			}
			assert.Equal(t, want.total(), got.total(), "sample count")
			assert.Equal(t, want, got)
		})
	}
	assert.GreaterOrEqual(t, exercised, 8, "too few fixtures were exercised for this test to mean much")
}

// exportOne sends pd through a queue-less exporter and returns the chunks
// the fake Relay accepted.
func exportOne(t *testing.T, pd pprofile.Profiles, mutate func(*Config)) []*sentry.Profile {
	t.Helper()
	relay := newFakeRelay(t, nil)
	cfg := newTestConfig(relay.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	if mutate != nil {
		mutate(cfg)
	}
	exp := startExporter(t, cfg, nil)
	require.NoError(t, exp.ConsumeProfiles(context.Background(), pd))
	return relay.chunks()
}

// stackNames is a sample's frames as function names, leaf first.
func stackNames(p *sentry.Profile, s sentry.Sample) string {
	var names []string
	for _, fi := range p.Stacks.At(int(s.StackID)) {
		names = append(names, p.Frames[fi].Function)
	}
	return strings.Join(names, "<")
}

func TestSyntheticProfiles(t *testing.T) {
	start := time.Unix(1_790_000_000, 0)

	t.Run("aggregated values are spread at sample_rate_hz", func(t *testing.T) {
		s := newSynth()
		p := s.profile(s.resource("agg"), "samples", "count", start, time.Second, 1)
		main := s.symbolized("main", "main.c", 3)
		leaf := s.symbolized("hot", "hot.c", 9)
		aggregatedSample(p, s.stack(leaf, main), 3)
		aggregatedSample(p, s.stack(main), 2)

		chunks := exportOne(t, s.pd, func(c *Config) { c.SampleRateHz = 100 })
		require.Len(t, chunks, 1)
		c := chunks[0]
		require.Len(t, c.Samples, 5, "one Sentry sample per counted observation")
		perStack := map[string]int{}
		for i, smp := range c.Samples {
			perStack[stackNames(c, smp)]++
			assert.Equal(t, start.Add(time.Duration(i)*10*time.Millisecond).UnixNano(), smp.Timestamp,
				"sample %d is not 1/100 s after the previous one", i)
		}
		assert.Equal(t, map[string]int{"hot<main": 3, "main": 2}, perStack)
	})

	t.Run("native addresses and mappings", func(t *testing.T) {
		s := newSynth()
		p := s.profile(s.resource("native"), "samples", "count", start, time.Second, 1)
		m := s.mapping("/usr/bin/server", "0a1b2c3d4e5f60718293a4b5c6d7e8f9", 0x400000, 0x500000)
		outer := s.native(m, 0x401000)
		inner := s.native(m, 0x402abc)
		timedSample(p, s.stack(inner, outer), start, start.Add(10*time.Millisecond))
		timedSample(p, s.stack(outer), start.Add(20*time.Millisecond))

		chunks := exportOne(t, s.pd, nil)
		require.Len(t, chunks, 1)
		c := chunks[0]
		assert.Equal(t, defaultPlatform, c.Platform)
		require.Len(t, c.Samples, 3)
		var addrs []string
		for _, smp := range c.Samples {
			var stack []string
			for _, fi := range c.Stacks.At(int(smp.StackID)) {
				stack = append(stack, fmt.Sprintf("%#x", c.Frames[fi].InstructionAddr))
			}
			addrs = append(addrs, strings.Join(stack, "<"))
		}
		assert.Equal(t, []string{"0x402abc<0x401000", "0x402abc<0x401000", "0x401000"}, addrs)
		require.NotEmpty(t, c.DebugMeta.Images, "mappings must become debug images for symbolication")
		assert.Equal(t, "/usr/bin/server", c.DebugMeta.Images[0].CodeFile)
		assert.Equal(t, uint64(0x400000), c.DebugMeta.Images[0].ImageAddr)
	})

	t.Run("several sample types send one view", func(t *testing.T) {
		s := newSynth()
		sp := s.resource("multi")
		main := s.symbolized("main", "main.go", 1)
		work := s.symbolized("work", "work.go", 2)
		stack := s.stack(work, main)
		counts := s.profile(sp, "samples", "count", start, time.Second, 1)
		timedSample(counts, stack, start, start.Add(10*time.Millisecond), start.Add(20*time.Millisecond))
		cpu := s.profile(sp, "cpu", "nanoseconds", start, time.Second, 10_000_000)
		aggregatedSample(cpu, stack, 30_000_000)

		chunks := exportOne(t, s.pd, nil)
		require.Len(t, chunks, 1, "views of the same samples must not be sent twice")
		require.Len(t, chunks[0].Samples, 3)
		for i, smp := range chunks[0].Samples {
			assert.Equal(t, "work<main", stackNames(chunks[0], smp))
			assert.Equal(t, start.Add(time.Duration(i)*10*time.Millisecond).UnixNano(), smp.Timestamp)
		}
	})

	t.Run("long profile is cut into chunks Relay accepts", func(t *testing.T) {
		s := newSynth()
		p := s.profile(s.resource("long"), "samples", "count", start, 150*time.Second, 1)
		stack := s.stack(s.symbolized("tick", "tick.go", 1))
		var at []time.Time
		for i := 0; i < 150; i++ {
			at = append(at, start.Add(time.Duration(i)*time.Second))
		}
		timedSample(p, stack, at...)

		chunks := exportOne(t, s.pd, nil)
		require.GreaterOrEqual(t, len(chunks), 3)
		got := sampleEvents{}
		for _, c := range chunks {
			got.add(c) // the fake Relay already checked each spans at most 66 s
		}
		assert.Equal(t, 150, got.total())
	})
}

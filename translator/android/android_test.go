package android_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/android"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// traceThreads reads the `*threads` section of a fixture's ART trace with
// nothing of the decoder: id → name.
func traceThreads(t *testing.T, sampled string) map[string]string {
	t.Helper()
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(sampled, "="))
	require.NoError(t, err)
	text := string(raw[:bytes.Index(raw, []byte("SLOW"))])
	_, after, _ := strings.Cut(text, "*threads\n")
	section, _, _ := strings.Cut(after, "*")
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(section), "\n") {
		id, name, _ := strings.Cut(line, "\t")
		out[id] = name
	}
	return out
}

// TestAndroidFixtures translates Sentry's real Android payloads (a
// transaction profile, a continuous chunk, a React Native chunk): every
// thread keeps its name, the samples' wall time adds up to the trace's own
// slices, the app's own methods are there with class, name, signature and
// file, and the trace's exactness shows in the period.
func TestAndroidFixtures(t *testing.T) {
	fallback := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		file       string
		version    string
		appMethod  string // a method of the app that must be on some stack
		wantTxName string
	}{
		{"relay__relay-profiling_tests_fixtures_android_legacy_valid.json", sentry.VersionV1, "io.sentry.samples.android", "SecondActivity"},
		{"relay__relay-profiling_tests_fixtures_android_chunk_valid.json", sentry.VersionV2, "io.sentry.samples.android", ""},
		{"relay__relay-profiling_tests_fixtures_android_chunk_valid_rn.json", sentry.VersionV2, "com.facebook.react", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			payload := fixtures.Read(t, tt.file)
			require.True(t, android.IsAndroidTrace(payload))
			var meta struct {
				SampledProfile string `json:"sampled_profile"`
			}
			require.NoError(t, json.Unmarshal(payload, &meta))

			p, warnings, err := android.DecodeAndroid(payload, fallback, art.DefaultLimits())
			require.NoError(t, err)
			assert.Empty(t, warnings, "Sentry's fixtures declare every method they use")
			assert.Equal(t, tt.version, p.Version)
			assert.Equal(t, "android", p.Platform)
			var wantWall uint64
			for _, w := range p.SampleWallNS {
				wantWall += w
			}

			b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{})
			n := b.Add(profilesin.DecodedProfile{Profile: p, Payload: payload})
			assert.Equal(t, len(p.Samples), n)
			pd := b.Profiles()
			translatortest.RequireValidPdata(t, pd)
			dict := pd.Dictionary()
			rp := pd.ResourceProfiles().At(0)
			prof := rp.ScopeProfiles().At(0).Profiles().At(0)
			str := func(i int32) string { return dict.StringTable().At(int(i)) }
			assert.Equal(t, "wall", str(prof.SampleType().TypeStrindex()))
			assert.Equal(t, int64(1000), prof.Period(), "an exact trace: microsecond resolution, not a sampling period")

			var gotWall uint64
			threads := map[string]string{}
			functions := map[string]bool{}
			for _, s := range prof.Samples().All() {
				for _, v := range s.Values().All() {
					gotWall += uint64(v)
				}
				attrs := translatortest.SampleAttrs(t, pd, s)
				if name, ok := attrs["thread.name"].(string); ok {
					threads[strconv.FormatInt(attrs["thread.id"].(int64), 10)] = name
				}
				for _, li := range dict.StackTable().At(int(s.StackIndex())).LocationIndices().All() {
					loc := dict.LocationTable().At(int(li))
					fn := dict.FunctionTable().At(int(loc.Lines().At(0).FunctionIndex()))
					functions[str(fn.NameStrindex())] = true
				}
			}
			assert.Equal(t, wantWall, gotWall, "the wall time of every slice is in the samples")

			// The traces use the dual clock: a second view of the same
			// samples holds their thread CPU time.
			require.Equal(t, 2, rp.ScopeProfiles().At(0).Profiles().Len())
			cpu := rp.ScopeProfiles().At(0).Profiles().At(1)
			assert.Equal(t, "cpu", str(cpu.SampleType().TypeStrindex()))
			assert.Equal(t, prof.ProfileID(), cpu.ProfileID())
			var wantCPU, gotCPU uint64
			for _, c := range p.SampleCPUNS {
				wantCPU += c
			}
			for _, s := range cpu.Samples().All() {
				for _, v := range s.Values().All() {
					gotCPU += uint64(v)
				}
			}
			assert.Equal(t, wantCPU, gotCPU)
			assert.Positive(t, gotCPU)
			assert.Less(t, gotCPU, gotWall, "threads wait more than they run")
			want := traceThreads(t, meta.SampledProfile)
			for id, name := range threads {
				assert.Equal(t, want[id], name, "thread %s", id)
			}
			assert.NotEmpty(t, threads)
			found := false
			for f := range functions {
				if strings.HasPrefix(f, tt.appMethod) {
					found = true
				}
			}
			assert.True(t, found, "no function of %s on any stack", tt.appMethod)
			assert.True(t, functions["android.os.Looper.loop"], "the main thread's looper")
			if tt.wantTxName != "" {
				assert.Equal(t, tt.wantTxName, translatortest.ProfileAttrs(pd, prof)["sentry.transaction.name"])
			}
			if strings.Contains(tt.file, "_rn") {
				// js_profile's thread 27198 is the trace's mqt_js thread.
				assert.Equal(t, "mqt_js", threads["27198"])
				assert.True(t, functions["global"], "a JS frame of js_profile")
			}
			if tt.version == sentry.VersionV1 {
				assert.Equal(t, "Android", resourceStr(rp, "process.runtime.name"))
				assert.Equal(t, "30", resourceStr(rp, "process.runtime.version"), "android_api_level")
			}
		})
	}
}

func resourceStr(rp pprofile.ResourceProfiles, key string) string {
	v, _ := rp.Resource().Attributes().Get(key)
	return v.AsString()
}

// TestAndroidBackToSentry: an exact-time Android profile goes back to
// Sentry as sample-format chunks with platform android, resampled at
// Sentry's rate: each stack of each thread keeps its time within one
// period, and the chunks pass Relay's rules.
func TestAndroidBackToSentry(t *testing.T) {
	payload := fixtures.Read(t, "relay__relay-profiling_tests_fixtures_android_chunk_valid.json")
	p, _, err := android.DecodeAndroid(payload, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), art.DefaultLimits())
	require.NoError(t, err)
	type key struct {
		thread string
		stack  int64
	}
	wall := map[key]uint64{}
	for i, s := range p.Samples {
		wall[key{s.ThreadID, s.StackID}] += p.SampleWallNS[i]
	}
	pd := profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{})

	chunks, drops := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
	require.NotEmpty(t, chunks)
	for i, c := range chunks {
		translatortest.RequireValidChunk(t, i, c.Profile, c.SizeBound)
	}
	period := 1e9 / 101.0 // profilesout.ExportOptions.DefaultSampleRateHz by default
	var sent int
	for _, c := range chunks {
		assert.Equal(t, "android", c.Profile.Platform)
		sent += len(c.Profile.Samples)
	}
	var total uint64
	for _, w := range wall {
		total += w
	}
	dropped := 0
	for _, d := range drops {
		dropped += d.Samples
	}
	// Every period of every (thread, stack) is one event, sent or counted
	// as dropped (Relay's lonely-thread rule); the remainders, under one
	// period per stack, are not.
	events := float64(sent + dropped)
	assert.InDelta(t, float64(total)/period, events, float64(len(wall)), "events × period ≈ the trace's time")
	t.Logf("%d slices, %.1f s of thread time → %d events sent, %d dropped, in %d chunks", len(p.Samples), float64(total)/1e9, sent, dropped, len(chunks))
}

// proxyTrace is a trace whose main thread calls through a runtime-generated
// proxy (method 0xf0, which the trace does not declare): looper 0–100 µs,
// the proxy 20–80 µs with render 30–50 µs inside it.
func proxyTrace(write func(int, art.Clock, []art.Thread, map[uint32]art.Method, []art.Event, uint64) []byte) []byte {
	methods := map[uint32]art.Method{
		0x4: {Class: "android.os.Looper", Name: "loop", Signature: "()V", Source: "Looper.java"},
		0x8: {Class: "com.example.App", Name: "render", Signature: "(I)V", Source: "App.kt", Line: 42},
	}
	events := []art.Event{
		{Thread: 7, Method: 0x4, Action: art.Enter, Wall: 0, CPU: 0},
		{Thread: 7, Method: 0xf0, Action: art.Enter, Wall: 20, CPU: 10},
		{Thread: 7, Method: 0x8, Action: art.Enter, Wall: 30, CPU: 15},
		{Thread: 7, Method: 0x8, Action: art.Exit, Wall: 50, CPU: 30},
		{Thread: 7, Method: 0xf0, Action: art.Exit, Wall: 80, CPU: 40},
	}
	return write(3, art.ClockDual, []art.Thread{{ID: 7, Name: "main"}}, methods, events, 100)
}

// functionTimes sums a profile's wall time by leaf function name.
func functionTimes(p *sentry.Profile) map[string]uint64 {
	out := map[string]uint64{}
	for i, s := range p.Samples {
		leaf := p.Stacks.At(int(s.StackID))[0]
		out[p.Frames[leaf].Function] += p.SampleWallNS[i] / 1000
	}
	return out
}

// TestAndroidUndeclaredMethods: a trace that calls methods it does not
// declare keeps every sample, names the frame unknown.<id>, and says so in
// one warning that reaches the item's outcome (the receiver counts it in
// otelcol_receiver_sentryprofile_item_warnings).
func TestAndroidUndeclaredMethods(t *testing.T) {
	want := map[string]uint64{"android.os.Looper.loop": 20 + 20, "unknown.0xf0": 10 + 30, "com.example.App.render": 20}
	for _, w := range []struct {
		form  string
		write func(int, art.Clock, []art.Thread, map[uint32]art.Method, []art.Event, uint64) []byte
	}{{"regular", arttest.Write}, {"streaming", arttest.WriteStreaming}} {
		t.Run(w.form, func(t *testing.T) {
			payload := []byte(`{"chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"071bfc9a1f8e4cb4a0a2e0bd1c5bde55",` +
				`"platform":"android","client_sdk":{"name":"sentry.java.android","version":"8.0.0"},"timestamp":1795000000.0,"sampled_profile":"` +
				base64.RawStdEncoding.EncodeToString(proxyTrace(w.write)) + `"}`)
			p, warnings, err := android.DecodeAndroid(payload, time.Now(), art.DefaultLimits())
			require.NoError(t, err)
			assert.Equal(t, want, functionTimes(p))
			require.Len(t, warnings, 1)
			assert.Equal(t, sentry.ReasonInvalidSampledProfile, warnings[0].Reason)
			assert.Contains(t, warnings[0].Error(), "2 records name 1 methods the trace does not declare (0xf0)")

			item := envelope.Item{Header: envelope.ItemHeader{Type: itemrules.ItemTypeProfileChunk, Length: -1}, Payload: payload, Size: int64(len(payload))}
			var dec itemrules.ItemDecoder
			p, warnings, serr := dec.Decode(&item, time.Now())
			require.Nil(t, serr)
			assert.Len(t, p.Samples, 5, "five slices: loop, proxy, render, proxy, loop")
			require.Len(t, warnings, 1, "the item decoder passes the warning on")
			assert.Equal(t, sentry.ReasonInvalidSampledProfile, warnings[0].Reason)
		})
	}
}

// TestDecodeARTTrace: a bare trace file of either form becomes an android
// chunk that ends at the given time, with its threads and samples and no
// Sentry metadata.
func TestDecodeARTTrace(t *testing.T) {
	end := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, write := range []func(int, art.Clock, []art.Thread, map[uint32]art.Method, []art.Event, uint64) []byte{arttest.Write, arttest.WriteStreaming} {
		raw := proxyTrace(write)
		p, warnings, err := android.DecodeARTTrace(raw, end, art.DefaultLimits())
		require.NoError(t, err)
		assert.Len(t, warnings, 1)
		assert.Equal(t, sentry.VersionV2, p.Version)
		assert.Equal(t, "android", p.Platform)
		assert.Equal(t, end.Add(-100*time.Microsecond), p.Timestamp)
		assert.Equal(t, []sentry.ThreadMetadata{{ThreadID: "7", Name: "main"}}, p.ThreadMetadata)
		assert.Equal(t, map[string]uint64{"android.os.Looper.loop": 40, "unknown.0xf0": 40, "com.example.App.render": 20}, functionTimes(p))
		last := p.Samples[len(p.Samples)-1]
		assert.Equal(t, end.Add(-20*time.Microsecond).UnixNano(), last.Timestamp, "the looper's last 20 µs")
		pd := profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p}}, profilesin.ReceiveOptions{})
		translatortest.RequireValidPdata(t, pd)
	}
	_, _, err := android.DecodeARTTrace([]byte("not a trace"), end, art.DefaultLimits())
	assert.ErrorContains(t, err, "profiling_invalid_sampled_profile")
}

// TestAndroidTimestamp: an Android profile's `timestamp` is read as every
// Sentry timestamp is (translator/internal/sentrytime): nanoseconds
// survive, and a value out of range falls back like a missing one.
func TestAndroidTimestamp(t *testing.T) {
	fallback := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	trace := base64.RawStdEncoding.EncodeToString(proxyTrace(arttest.Write))
	tests := []struct {
		text string
		want time.Time
	}{
		{`1795000000.123456789`, time.Unix(1795000000, 123456789).UTC()},
		{`1795000000.0000001`, time.Unix(1795000000, 100).UTC()},
		{`"2026-11-24T12:00:00.123456789Z"`, time.Date(2026, 11, 24, 12, 0, 0, 123456789, time.UTC)},
		{`0`, fallback.Add(-100 * time.Microsecond)},
		{`10000000000.5`, fallback.Add(-100 * time.Microsecond)},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			payload := []byte(`{"chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"071bfc9a1f8e4cb4a0a2e0bd1c5bde55",` +
				`"platform":"android","timestamp":` + tt.text + `,"sampled_profile":"` + trace + `"}`)
			p, _, err := android.DecodeAndroid(payload, fallback, art.DefaultLimits())
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Timestamp)
		})
	}
}

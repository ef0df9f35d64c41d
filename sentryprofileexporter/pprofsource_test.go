package sentryprofileexporter

import (
	"bytes"
	"context"
	"math"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// recordGoCPUProfile records a real CPU profile of this test process while
// it burns CPU, as `go tool pprof -proto` would hand it on: aggregated
// values (samples/count and cpu/nanoseconds), no timestamps, mappings in
// process addresses. Skipped when another CPU profile runs (go test
// -cpuprofile) or the machine gave the burn no samples.
func recordGoCPUProfile(t *testing.T) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("cannot record a CPU profile here: %v", err)
	}
	deadline := time.Now().Add(400 * time.Millisecond)
	x := 0.0
	for time.Now().Before(deadline) {
		x += burnLeaf(x)
	}
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	if len(p.Sample) < 2 || x == 0 {
		t.Skipf("the CPU burn got %d samples; too few to test with", len(p.Sample))
	}
	return p
}

//go:noinline
func burnLeaf(x float64) float64 {
	for i := range 10_000 {
		x = math.Sin(x + float64(i))
	}
	return x
}

// otlpFromPprof converts a pprof profile to OTLP the way the collector's
// pprof converters do: one OTLP profile per pprof sample type (OTLP has one
// sample type per profile), all views sharing id, time and duration, values
// without timestamps, pprof mappings, locations and functions carried over.
// (contrib's pkg/translator/pprof is not installable here.)
func otlpFromPprof(t *testing.T, p *profile.Profile) pprofile.Profiles {
	t.Helper()
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("")
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	strs := map[string]int32{"": 0}
	str := func(s string) int32 {
		if i, ok := strs[s]; ok {
			return i
		}
		i := int32(d.StringTable().Len())
		d.StringTable().Append(s)
		strs[s] = i
		return i
	}
	mappings := map[uint64]int32{}
	for _, m := range p.Mapping {
		om := d.MappingTable().AppendEmpty()
		om.SetMemoryStart(m.Start)
		om.SetMemoryLimit(m.Limit)
		om.SetFileOffset(m.Offset)
		om.SetFilenameStrindex(str(m.File))
		if m.BuildID != "" {
			kv := d.AttributeTable().AppendEmpty()
			kv.SetKeyStrindex(str(string(semconv.ProcessExecutableBuildIDGoKey)))
			kv.Value().SetStr(m.BuildID)
			om.AttributeIndices().Append(int32(d.AttributeTable().Len() - 1))
		}
		mappings[m.ID] = int32(d.MappingTable().Len() - 1)
	}
	functions := map[uint64]int32{}
	for _, f := range p.Function {
		of := d.FunctionTable().AppendEmpty()
		of.SetNameStrindex(str(f.Name))
		of.SetSystemNameStrindex(str(f.SystemName))
		of.SetFilenameStrindex(str(f.Filename))
		of.SetStartLine(f.StartLine)
		functions[f.ID] = int32(d.FunctionTable().Len() - 1)
	}
	locations := map[uint64]int32{}
	for _, l := range p.Location {
		ol := d.LocationTable().AppendEmpty()
		ol.SetAddress(l.Address)
		if l.Mapping != nil {
			ol.SetMappingIndex(mappings[l.Mapping.ID])
		}
		for _, ln := range l.Line {
			oln := ol.Lines().AppendEmpty()
			oln.SetFunctionIndex(functions[ln.Function.ID])
			oln.SetLine(ln.Line)
			oln.SetColumn(ln.Column)
		}
		locations[l.ID] = int32(d.LocationTable().Len() - 1)
	}
	sp := pd.ResourceProfiles().AppendEmpty().ScopeProfiles().AppendEmpty()
	var id pprofile.ProfileID
	copy(id[:], "pprof-cpu-test--")
	for vi, st := range p.SampleType {
		op := sp.Profiles().AppendEmpty()
		op.SetProfileID(id)
		op.SampleType().SetTypeStrindex(str(st.Type))
		op.SampleType().SetUnitStrindex(str(st.Unit))
		if p.PeriodType != nil {
			op.PeriodType().SetTypeStrindex(str(p.PeriodType.Type))
			op.PeriodType().SetUnitStrindex(str(p.PeriodType.Unit))
		}
		op.SetPeriod(p.Period)
		op.SetTime(pcommon.Timestamp(p.TimeNanos))
		op.SetDurationNano(uint64(p.DurationNanos))
		for _, s := range p.Sample {
			stack := d.StackTable().AppendEmpty()
			for _, l := range s.Location {
				stack.LocationIndices().Append(locations[l.ID])
			}
			os := op.Samples().AppendEmpty()
			os.SetStackIndex(int32(d.StackTable().Len() - 1))
			os.Values().Append(s.Value[vi])
		}
	}
	return pd
}

// TestPprofThroughExporter sends a real Go CPU profile, converted to OTLP,
// through the exporter: aggregated values become one sample per counted
// observation, spread over the profile at its period.
func TestPprofThroughExporter(t *testing.T) {
	prof := recordGoCPUProfile(t)
	pd := otlpFromPprof(t, prof)
	require.Equal(t, "samples", prof.SampleType[0].Type)
	in := int64(0)
	for _, s := range prof.Sample {
		in += s.Value[0] // the samples/count view is the one converted
	}

	relay := newFakeRelay(t, nil)
	cfg := newTestConfig(relay.dsn())
	cfg.DefaultRelease, cfg.DefaultEnvironment = "pprof-test@1", "ci"
	exp := startExporter(t, cfg, nil)
	require.NoError(t, exp.ConsumeProfiles(context.Background(), pd))

	sent := func() int64 { return counter(t, exp.telemetry, "samples_sent", "") }
	dropped := func() int64 { return counter(t, exp.telemetry, "samples_dropped", "") }
	require.Eventually(t, func() bool { return sent()+dropped() == in }, testTimeout, 10*time.Millisecond,
		"samples in = samples sent + samples dropped: %d in, %d sent, %d dropped", in, sent(), dropped())

	chunks := relay.chunks()
	require.NotEmpty(t, chunks)
	received := 0
	named := 0
	for _, c := range chunks {
		received += len(c.Samples)
		assert.Equal(t, "pprof-test@1", c.Release)
		assert.Equal(t, "ci", c.Environment)
		assert.Equal(t, chunks[0].ProfilerID, c.ProfilerID, "one profiler")
		assert.Equal(t, chunks[0].Platform, c.Platform, "one platform")
		assert.LessOrEqual(t, chunkSpanNanos(c), int64(60e9))
		requireFramesInOwnImage(t, c)
		for i, img := range c.DebugMeta.Images {
			assert.NotZero(t, img.ImageAddr, "image %d keeps the process address it was loaded at", i)
		}
		for _, f := range c.Frames {
			if f.Function == "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter.burnLeaf" {
				named++
			}
		}
	}
	assert.Equal(t, int64(received), sent(), "samples_sent counts the samples Sentry accepted")
	assert.NotZero(t, named, "Go frames arrive named")
	for reason := range droppedByReason(t, exp.telemetry) {
		assert.Equal(t, string(sentry.ReasonNotEnoughSamples), reason)
	}
	t.Logf("pprof: %d samples in, %d sent in %d chunks, %v dropped", in, sent(), len(chunks), droppedByReason(t, exp.telemetry))
}

package pprofconv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

const (
	testStart    = 1_795_000_000_000_000_000
	testBuildID  = "4f1c0e7d2a9b"
	testTraceHex = "0102030405060708090a0b0c0d0e0f10"
	testSpanHex  = "1112131415161718"
)

// twoThreadProfiles builds one profile in which two threads sample two
// stacks that run through one mapped binary:
//
//	stack 1: work (leaf) <- main
//	stack 2: main
//
// Samples: main thread on stack 1 three times (timestamps only), worker on
// stack 2 with value 5, worker on stack 1 once with a link and neither
// values nor timestamps.
func twoThreadProfiles() pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	strs := d.StringTable()
	str := func(s string) int32 {
		for i, v := range strs.All() {
			if v == s {
				return int32(i)
			}
		}
		strs.Append(s)
		return int32(strs.Len() - 1)
	}
	str("")

	// The reserved zero entries OTLP requires at index 0.
	d.MappingTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	d.LinkTable().AppendEmpty()

	attr := func(key string, set func(pcommon.Value)) int32 {
		kv := d.AttributeTable().AppendEmpty()
		kv.SetKeyStrindex(str(key))
		set(kv.Value())
		return int32(d.AttributeTable().Len() - 1)
	}
	buildID := attr(string(semconv.ProcessExecutableBuildIDGNUKey), func(v pcommon.Value) { v.SetStr(testBuildID) })
	mainID := attr(string(semconv.ThreadIDKey), func(v pcommon.Value) { v.SetInt(1) })
	mainName := attr(string(semconv.ThreadNameKey), func(v pcommon.Value) { v.SetStr("MainThread") })
	workerID := attr(string(semconv.ThreadIDKey), func(v pcommon.Value) { v.SetInt(2) })
	workerName := attr(string(semconv.ThreadNameKey), func(v pcommon.Value) { v.SetStr("worker") })

	m := d.MappingTable().AppendEmpty()
	m.SetMemoryStart(0x1000)
	m.SetMemoryLimit(0x2000)
	m.SetFileOffset(0x100)
	m.SetFilenameStrindex(str("/bin/app"))
	m.AttributeIndices().Append(buildID)

	fn := func(name string, startLine int64) int32 {
		f := d.FunctionTable().AppendEmpty()
		f.SetNameStrindex(str(name))
		f.SetSystemNameStrindex(str("sys_" + name))
		f.SetFilenameStrindex(str("app.go"))
		f.SetStartLine(startLine)
		return int32(d.FunctionTable().Len() - 1)
	}
	fnMain, fnWork := fn("main", 3), fn("work", 30)

	loc := func(addr uint64, fn int32, line int64) int32 {
		l := d.LocationTable().AppendEmpty()
		l.SetMappingIndex(1)
		l.SetAddress(addr)
		ln := l.Lines().AppendEmpty()
		ln.SetFunctionIndex(fn)
		ln.SetLine(line)
		ln.SetColumn(7)
		return int32(d.LocationTable().Len() - 1)
	}
	locMain, locWork := loc(0x1100, fnMain, 10), loc(0x1200, fnWork, 42)

	d.StackTable().AppendEmpty().LocationIndices().FromRaw([]int32{locWork, locMain})
	d.StackTable().AppendEmpty().LocationIndices().FromRaw([]int32{locMain})

	link := d.LinkTable().AppendEmpty()
	link.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	link.SetSpanID(pcommon.SpanID{0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18})

	rp := pd.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr(string(semconv.ServiceNameKey), "checkout")
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(str("samples"))
	p.SampleType().SetUnitStrindex(str("count"))
	p.PeriodType().SetTypeStrindex(str("cpu"))
	p.PeriodType().SetUnitStrindex(str("nanoseconds"))
	p.SetPeriod(9_900_990)
	p.SetTime(testStart)
	p.SetDurationNano(2_000_000_000)

	s := p.Samples().AppendEmpty()
	s.SetStackIndex(1)
	s.AttributeIndices().FromRaw([]int32{mainID, mainName})
	s.TimestampsUnixNano().FromRaw([]uint64{testStart, testStart + 10_000_000, testStart + 20_000_000})

	s = p.Samples().AppendEmpty()
	s.SetStackIndex(2)
	s.AttributeIndices().FromRaw([]int32{workerID, workerName})
	s.Values().FromRaw([]int64{5})

	s = p.Samples().AppendEmpty()
	s.SetStackIndex(1)
	s.AttributeIndices().FromRaw([]int32{workerID, workerName})
	s.SetLinkIndex(1)
	return pd
}

// stackOf renders a sample's stack as "function@address:line" leaf first.
func stackOf(s *profile.Sample) []string {
	var out []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			out = append(out, fmt.Sprintf("%s@%#x:%d", ln.Function.Name, l.Address, ln.Line))
		}
	}
	return out
}

func TestConvertTwoThreads(t *testing.T) {
	got, err := Convert(twoThreadProfiles())
	require.NoError(t, err)
	require.Len(t, got, 1)
	p := got[0]
	require.NoError(t, p.CheckValid())

	assert.Equal(t, []*profile.ValueType{{Type: "samples", Unit: "count"}}, p.SampleType)
	assert.Equal(t, &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, p.PeriodType)
	assert.Equal(t, int64(9_900_990), p.Period)
	assert.Equal(t, int64(testStart), p.TimeNanos)
	assert.Equal(t, int64(2_000_000_000), p.DurationNanos)
	assert.Contains(t, p.Comments, string(semconv.ServiceNameKey)+"=checkout")

	want := []struct {
		name     string
		value    int64
		stack    []string
		labels   map[string][]string
		numLabel map[string][]int64
	}{
		{
			name:     "timestamps count one each",
			value:    3,
			stack:    []string{"work@0x1200:42", "main@0x1100:10"},
			labels:   map[string][]string{string(semconv.ThreadNameKey): {"MainThread"}},
			numLabel: map[string][]int64{string(semconv.ThreadIDKey): {1}},
		},
		{
			name:     "values are used as given",
			value:    5,
			stack:    []string{"main@0x1100:10"},
			labels:   map[string][]string{string(semconv.ThreadNameKey): {"worker"}},
			numLabel: map[string][]int64{string(semconv.ThreadIDKey): {2}},
		},
		{
			name:  "no values or timestamps counts one, link becomes labels",
			value: 1,
			stack: []string{"work@0x1200:42", "main@0x1100:10"},
			labels: map[string][]string{
				string(semconv.ThreadNameKey): {"worker"},
				labelTraceID:                  {testTraceHex},
				labelSpanID:                   {testSpanHex},
			},
			numLabel: map[string][]int64{string(semconv.ThreadIDKey): {2}},
		},
	}
	require.Len(t, p.Sample, len(want))
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			s := p.Sample[i]
			assert.Equal(t, []int64{w.value}, s.Value)
			assert.Equal(t, w.stack, stackOf(s))
			assert.Equal(t, w.labels, s.Label)
			assert.Equal(t, w.numLabel, s.NumLabel)
		})
	}

	// Shared dictionary entries stay shared: two locations, two functions,
	// one mapping, whatever the number of samples referencing them.
	require.Len(t, p.Location, 2)
	require.Len(t, p.Function, 2)
	require.Len(t, p.Mapping, 1)
	assert.Same(t, p.Sample[0].Location[1], p.Sample[1].Location[0])
	m := p.Mapping[0]
	assert.Equal(t, profile.Mapping{
		ID: 1, Start: 0x1000, Limit: 0x2000, Offset: 0x100, File: "/bin/app", BuildID: testBuildID,
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true,
	}, *m)
	for _, f := range p.Function {
		assert.Equal(t, "sys_"+f.Name, f.SystemName)
		assert.Equal(t, "app.go", f.Filename)
	}
	assert.Equal(t, int64(7), p.Location[0].Line[0].Column)
}

func TestConvertWriteParseRoundTrip(t *testing.T) {
	got, err := Convert(twoThreadProfiles())
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, got[0].Write(&buf))
	// Write gzips; pprof files start with the gzip magic.
	require.Equal(t, []byte{0x1f, 0x8b}, buf.Bytes()[:2])

	back, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, back.CheckValid())
	require.Len(t, back.Sample, 3)
	var total int64
	for _, s := range back.Sample {
		total += s.Value[0]
	}
	assert.Equal(t, int64(9), total)
	assert.Equal(t, []string{"work@0x1200:42", "main@0x1100:10"}, stackOf(back.Sample[0]))
	assert.Equal(t, testBuildID, back.Mapping[0].BuildID)
	assert.Equal(t, []string{testTraceHex}, back.Sample[2].Label[labelTraceID])
}

func TestConvertOneResultPerProfile(t *testing.T) {
	pd := twoThreadProfiles()
	rp := pd.ResourceProfiles().At(0)
	// A second scope whose profile only samples stack 2: its pprof profile
	// must not carry the locations only stack 1 uses.
	second := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	rp.ScopeProfiles().At(0).Profiles().At(0).SampleType().CopyTo(second.SampleType())
	s := second.Samples().AppendEmpty()
	s.SetStackIndex(2)
	s.Values().FromRaw([]int64{4, 6})

	got, err := Convert(pd)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.NoError(t, got[1].CheckValid())
	require.Len(t, got[1].Sample, 1)
	assert.Equal(t, []int64{10}, got[1].Sample[0].Value)
	assert.Len(t, got[1].Location, 1)
	assert.Len(t, got[1].Function, 1)
	assert.Nil(t, got[1].PeriodType)
}

func TestConvertEmpty(t *testing.T) {
	got, err := Convert(pprofile.NewProfiles())
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestConvertBadIndices(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(pd pprofile.Profiles)
		want   string
	}{
		{
			name:   "stack index past the table",
			break_: func(pd pprofile.Profiles) { firstSample(pd).SetStackIndex(99) },
			want:   "resource 0 scope 0 profile 0: sample 0: stack_index 99 out of range [0, 3)",
		},
		{
			name:   "negative stack index",
			break_: func(pd pprofile.Profiles) { firstSample(pd).SetStackIndex(-1) },
			want:   "sample 0: stack_index -1 out of range",
		},
		{
			name: "location index in a stack",
			break_: func(pd pprofile.Profiles) {
				pd.Dictionary().StackTable().At(1).LocationIndices().SetAt(0, 50)
			},
			want: "sample 0: stack 1 location_indices[0]: location index 50 out of range [0, 3)",
		},
		{
			name: "function index in a line",
			break_: func(pd pprofile.Profiles) {
				pd.Dictionary().LocationTable().At(2).Lines().At(0).SetFunctionIndex(8)
			},
			want: "location 2 line 0: function_index 8 out of range [0, 3)",
		},
		{
			name:   "mapping index",
			break_: func(pd pprofile.Profiles) { pd.Dictionary().LocationTable().At(2).SetMappingIndex(4) },
			want:   "location 2: mapping_index 4 out of range [0, 2)",
		},
		{
			name:   "function name string",
			break_: func(pd pprofile.Profiles) { pd.Dictionary().FunctionTable().At(2).SetNameStrindex(1000) },
			want:   "function 2 name: string index 1000 out of range",
		},
		{
			name:   "mapping filename string",
			break_: func(pd pprofile.Profiles) { pd.Dictionary().MappingTable().At(1).SetFilenameStrindex(-3) },
			want:   "mapping 1 filename: string index -3 out of range",
		},
		{
			name:   "sample attribute index",
			break_: func(pd pprofile.Profiles) { firstSample(pd).AttributeIndices().SetAt(1, 77) },
			want:   "sample 0: attribute_indices[1]: attribute index 77 out of range",
		},
		{
			name:   "attribute key string",
			break_: func(pd pprofile.Profiles) { pd.Dictionary().AttributeTable().At(2).SetKeyStrindex(500) },
			want:   "attribute 2 key: string index 500 out of range",
		},
		{
			name: "link index",
			break_: func(pd pprofile.Profiles) {
				firstProfile(pd).Samples().At(2).SetLinkIndex(3)
			},
			want: "sample 2: link_index 3 out of range [0, 2)",
		},
		{
			name:   "sample type string",
			break_: func(pd pprofile.Profiles) { firstProfile(pd).SampleType().SetUnitStrindex(300) },
			want:   "sample_type: unit: string index 300 out of range",
		},
		{
			name:   "profile attribute index",
			break_: func(pd pprofile.Profiles) { firstProfile(pd).AttributeIndices().Append(40) },
			want:   "attribute_indices[0]: attribute index 40 out of range",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := twoThreadProfiles()
			tt.break_(pd)
			got, err := Convert(pd)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, got)
		})
	}
}

func firstProfile(pd pprofile.Profiles) pprofile.Profile {
	return pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
}

func firstSample(pd pprofile.Profiles) pprofile.Sample { return firstProfile(pd).Samples().At(0) }

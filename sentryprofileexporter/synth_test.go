package sentryprofileexporter

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// synth builds OTLP profiles the way non-Sentry producers do (eBPF profiler,
// pprof conversion, OTLP SDKs), with its own dedup maps so that every table
// entry is written once.
type synth struct {
	pd        pprofile.Profiles
	dict      pprofile.ProfilesDictionary
	strings   map[string]int32
	functions map[[2]string]int32
	mappings  map[string]int32
}

func newSynth() *synth {
	s := &synth{
		pd:        pprofile.NewProfiles(),
		strings:   map[string]int32{},
		functions: map[[2]string]int32{},
		mappings:  map[string]int32{},
	}
	s.dict = s.pd.Dictionary()
	// Index 0 of every table is the zero value, which NewProfiles does not
	// seed.
	s.dict.StringTable().Append("")
	s.strings[""] = 0
	s.dict.FunctionTable().AppendEmpty()
	s.dict.LocationTable().AppendEmpty()
	s.dict.MappingTable().AppendEmpty()
	s.dict.StackTable().AppendEmpty()
	s.dict.AttributeTable().AppendEmpty()
	s.dict.LinkTable().AppendEmpty()
	return s
}

func (s *synth) str(v string) int32 {
	if i, ok := s.strings[v]; ok {
		return i
	}
	i := int32(s.dict.StringTable().Len())
	s.dict.StringTable().Append(v)
	s.strings[v] = i
	return i
}

func (s *synth) function(name, file string) int32 {
	key := [2]string{name, file}
	if i, ok := s.functions[key]; ok {
		return i
	}
	i := int32(s.dict.FunctionTable().Len())
	f := s.dict.FunctionTable().AppendEmpty()
	f.SetNameStrindex(s.str(name))
	f.SetFilenameStrindex(s.str(file))
	s.functions[key] = i
	return i
}

// mapping adds an executable mapping with a GNU build id.
func (s *synth) mapping(file, buildID string, start, limit uint64) int32 {
	if i, ok := s.mappings[file]; ok {
		return i
	}
	i := int32(s.dict.MappingTable().Len())
	m := s.dict.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(s.str(file))
	m.SetMemoryStart(start)
	m.SetMemoryLimit(limit)
	attr := int32(s.dict.AttributeTable().Len())
	kv := s.dict.AttributeTable().AppendEmpty()
	kv.SetKeyStrindex(s.str(string(semconv.ProcessExecutableBuildIDGNUKey)))
	kv.Value().SetStr(buildID)
	m.AttributeIndices().Append(attr)
	s.mappings[file] = i
	return i
}

// symbolized adds a location with one line of a named function.
func (s *synth) symbolized(name, file string, line int64) int32 {
	i := int32(s.dict.LocationTable().Len())
	l := s.dict.LocationTable().AppendEmpty()
	ln := l.Lines().AppendEmpty()
	ln.SetFunctionIndex(s.function(name, file))
	ln.SetLine(line)
	return i
}

// native adds an unsymbolized location: an address in a mapping.
func (s *synth) native(mapping int32, addr uint64) int32 {
	i := int32(s.dict.LocationTable().Len())
	l := s.dict.LocationTable().AppendEmpty()
	l.SetMappingIndex(mapping)
	l.SetAddress(addr)
	return i
}

// stack adds a stack of locations, leaf first.
func (s *synth) stack(locations ...int32) int32 {
	i := int32(s.dict.StackTable().Len())
	s.dict.StackTable().AppendEmpty().LocationIndices().Append(locations...)
	return i
}

// resource starts a resource with a service name and returns its only
// scope.
func (s *synth) resource(service string) pprofile.ScopeProfiles {
	rp := s.pd.ResourceProfiles().AppendEmpty()
	if service != "" {
		rp.Resource().Attributes().PutStr(string(semconv.ServiceNameKey), service)
	}
	return rp.ScopeProfiles().AppendEmpty()
}

// profile adds a profile of one sample type covering [start, start+d).
func (s *synth) profile(sp pprofile.ScopeProfiles, typ, unit string, start time.Time, d time.Duration, period int64) pprofile.Profile {
	p := sp.Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(s.str(typ))
	p.SampleType().SetUnitStrindex(s.str(unit))
	p.PeriodType().SetTypeStrindex(s.str(typ))
	p.PeriodType().SetUnitStrindex(s.str(unit))
	p.SetPeriod(period)
	p.SetTime(pcommon.NewTimestampFromTime(start))
	p.SetDurationNano(uint64(d))
	var id pprofile.ProfileID
	copy(id[:], []byte(start.Format("150405.000000000")))
	p.SetProfileID(id)
	return p
}

// timedSample adds a sample seen at the given times.
func timedSample(p pprofile.Profile, stack int32, at ...time.Time) {
	smp := p.Samples().AppendEmpty()
	smp.SetStackIndex(stack)
	for _, t := range at {
		smp.TimestampsUnixNano().Append(uint64(t.UnixNano()))
	}
}

// aggregatedSample adds a sample that only carries a value.
func aggregatedSample(p pprofile.Profile, stack int32, value int64) {
	smp := p.Samples().AppendEmpty()
	smp.SetStackIndex(stack)
	smp.Values().Append(value)
}

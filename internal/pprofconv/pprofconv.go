// Package pprofconv converts OTLP profiles (pdata pprofile) into the pprof
// format of github.com/google/pprof/profile, so that `go tool pprof` and the
// rest of the pprof ecosystem can read what the collector produced.
//
// The conversion is strict about references: every index into the
// ProfilesDictionary is bounds-checked and a bad one is reported as an error
// naming the table, the index and the record that holds it. Malformed input
// never panics.
package pprofconv

import (
	"fmt"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofdict"
)

// Sample labels that carry a sample's link. OTLP links are not attributes, so
// no semantic-convention key exists for them; these names match what
// trace-aware pprof tooling (Pyroscope, Go's runtime/pprof labels) looks for.
const (
	labelTraceID = "trace_id"
	labelSpanID  = "span_id"
)

// Build-id attributes of a mapping, in order of preference: the GNU build id
// is what symbol servers index, the Go one what `go tool pprof` prints, and
// the htlhash is a profiler-computed fallback.
var buildIDKeys = [...]string{
	string(semconv.ProcessExecutableBuildIDGNUKey),
	string(semconv.ProcessExecutableBuildIDGoKey),
	string(semconv.ProcessExecutableBuildIDHtlhashKey),
}

// Convert returns one pprof profile per pprofile.Profile in pd, in the order
// they appear under ResourceProfiles and ScopeProfiles. Each result holds only
// the functions, locations and mappings its own samples use, and passes
// CheckValid.
//
// Sample values: a sample with values contributes their sum (a Profile has a
// single sample type; several values are per-timestamp observations of it); a
// sample with timestamps and no values counts 1 per timestamp; a sample with
// neither counts 1.
//
// Index 0 of the mapping, attribute and link tables is the "absent" entry
// defined by OTLP: references to it are treated as no mapping, no attribute,
// no link. Every other reference, including index 0 of the other tables, is
// resolved as written.
//
// Resource and profile attributes, which pprof has no place for, become
// "key=value" comments.
func Convert(pd pprofile.Profiles) ([]*profile.Profile, error) {
	dict := pd.Dictionary()
	var out []*profile.Profile
	for ri, rp := range pd.ResourceProfiles().All() {
		for si, sp := range rp.ScopeProfiles().All() {
			converted, err := convertScope(dict, rp.Resource(), sp)
			if err != nil {
				return nil, fmt.Errorf("resource %d scope %d %w", ri, si, err)
			}
			out = append(out, converted...)
		}
	}
	return out, nil
}

// convertScope converts the profiles of one scope, each on its own.
func convertScope(dict pprofile.ProfilesDictionary, res pcommon.Resource, sp pprofile.ScopeProfiles) ([]*profile.Profile, error) {
	out := make([]*profile.Profile, 0, sp.Profiles().Len())
	for pi, p := range sp.Profiles().All() {
		pp, err := newConverter(dict).convert(res, p)
		if err != nil {
			return nil, fmt.Errorf("profile %d: %w", pi, err)
		}
		out = append(out, pp)
	}
	return out, nil
}

// converter builds one pprof profile. Its maps are keyed by dictionary index
// so that a location or function shared by many stacks is converted once and
// the pprof tables stay deduplicated the way the dictionary was.
type converter struct {
	dict      pprofdict.Reader
	out       *profile.Profile
	locations map[int32]*profile.Location
	functions map[int32]*profile.Function
	mappings  map[int32]*profile.Mapping
	stacks    map[int32][]*profile.Location
}

func newConverter(dict pprofile.ProfilesDictionary) *converter {
	return &converter{
		dict:      pprofdict.New(dict),
		out:       &profile.Profile{},
		locations: make(map[int32]*profile.Location),
		functions: make(map[int32]*profile.Function),
		mappings:  make(map[int32]*profile.Mapping),
		stacks:    make(map[int32][]*profile.Location),
	}
}

func (c *converter) convert(res pcommon.Resource, p pprofile.Profile) (*profile.Profile, error) {
	if err := c.header(p); err != nil {
		return nil, err
	}
	if err := c.comments(res, p); err != nil {
		return nil, err
	}
	// Profile.samples
	c.out.Sample = make([]*profile.Sample, 0, p.Samples().Len())
	for i, s := range p.Samples().All() {
		ps, err := c.sample(s)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		c.out.Sample = append(c.out.Sample, ps)
	}
	return c.out, nil
}

// header converts Profile.sample_type, .period_type, .period,
// .time_unix_nano and .duration_nano.
func (c *converter) header(p pprofile.Profile) error {
	st, err := c.valueType(p.SampleType())
	if err != nil {
		return fmt.Errorf("sample_type: %w", err)
	}
	c.out.SampleType = []*profile.ValueType{st}
	pt, err := c.valueType(p.PeriodType())
	if err != nil {
		return fmt.Errorf("period_type: %w", err)
	}
	if pt.Type != "" || pt.Unit != "" {
		c.out.PeriodType = pt
	}
	c.out.Period = p.Period()
	c.out.TimeNanos = int64(p.Time())
	c.out.DurationNanos = int64(p.DurationNano())
	return nil
}

// comments converts Resource.attributes and Profile.attribute_indices,
// which pprof has no place for, into "key=value" comments.
func (c *converter) comments(res pcommon.Resource, p pprofile.Profile) error {
	comment := func(key string, val pcommon.Value) { c.out.Comments = append(c.out.Comments, key+"="+val.AsString()) }
	for k, v := range res.Attributes().All() {
		comment(k, v)
	}
	return c.eachAttribute(p.AttributeIndices(), comment)
}

func (c *converter) sample(s pprofile.Sample) (*profile.Sample, error) {
	ps := &profile.Sample{Value: []int64{sampleValue(s)}}

	// Sample.stack_index
	locs, err := c.stack(s.StackIndex())
	if err != nil {
		return nil, err
	}
	ps.Location = locs

	if err := c.labels(ps, s.AttributeIndices()); err != nil {
		return nil, err
	}
	// Sample.link_index
	if li := s.LinkIndex(); li != 0 {
		link, ok := c.dict.Link(li)
		if !ok {
			return nil, c.dict.OutOfRange("link_index", li, pprofdict.Links)
		}
		addLinkLabels(ps, link)
	}
	return ps, nil
}

// labels converts Sample.attribute_indices into labels.
func (c *converter) labels(ps *profile.Sample, indices pcommon.Int32Slice) error {
	return c.eachAttribute(indices, func(key string, val pcommon.Value) { addLabel(ps, key, val) })
}

// eachAttribute calls f with the key and value of each attribute of
// indices; index 0, the table's reserved empty entry, is none.
func (c *converter) eachAttribute(indices pcommon.Int32Slice, f func(key string, val pcommon.Value)) error {
	for i, idx := range indices.All() {
		key, val, ok, err := c.attribute(idx)
		if err != nil {
			return fmt.Errorf("attribute_indices[%d]: %w", i, err)
		}
		if ok {
			f(key, val)
		}
	}
	return nil
}

// addLabel adds a sample attribute as a label: a numeric one for an
// integer, a string one otherwise.
func addLabel(ps *profile.Sample, key string, val pcommon.Value) {
	if val.Type() == pcommon.ValueTypeInt {
		if ps.NumLabel == nil {
			ps.NumLabel = make(map[string][]int64)
		}
		ps.NumLabel[key] = append(ps.NumLabel[key], val.Int())
		return
	}
	addStrLabel(ps, key, val.AsString())
}

func addStrLabel(ps *profile.Sample, key, val string) {
	if ps.Label == nil {
		ps.Label = make(map[string][]string)
	}
	ps.Label[key] = append(ps.Label[key], val)
}

// addLinkLabels adds a sample's link as the trace_id and span_id labels.
func addLinkLabels(ps *profile.Sample, link pprofile.Link) {
	if ps.Label == nil {
		ps.Label = make(map[string][]string)
	}
	if tid := link.TraceID(); !tid.IsEmpty() {
		addStrLabel(ps, labelTraceID, tid.String())
	}
	if sid := link.SpanID(); !sid.IsEmpty() {
		addStrLabel(ps, labelSpanID, sid.String())
	}
}

// sampleValue is the pprof value of one OTLP sample; see Convert.
func sampleValue(s pprofile.Sample) int64 {
	if vals := s.Values(); vals.Len() > 0 {
		var sum int64
		for _, v := range vals.All() {
			sum += v
		}
		return sum
	}
	if n := s.TimestampsUnixNano().Len(); n > 0 {
		return int64(n)
	}
	return 1
}

func (c *converter) stack(idx int32) ([]*profile.Location, error) {
	if locs, ok := c.stacks[idx]; ok {
		return locs, nil
	}
	stack, ok := c.dict.Stack(idx)
	if !ok {
		return nil, c.dict.OutOfRange("stack_index", idx, pprofdict.Stacks)
	}
	locs, err := c.stackLocations(stack.LocationIndices())
	if err != nil {
		return nil, fmt.Errorf("stack %d %w", idx, err)
	}
	c.stacks[idx] = locs
	return locs, nil
}

// stackLocations converts Stack.location_indices.
func (c *converter) stackLocations(indices pcommon.Int32Slice) ([]*profile.Location, error) {
	locs := make([]*profile.Location, 0, indices.Len())
	for i, li := range indices.All() {
		loc, err := c.location(li)
		if err != nil {
			return nil, fmt.Errorf("location_indices[%d]: %w", i, err)
		}
		locs = append(locs, loc)
	}
	return locs, nil
}

func (c *converter) location(idx int32) (*profile.Location, error) {
	if loc, ok := c.locations[idx]; ok {
		return loc, nil
	}
	l, ok := c.dict.Location(idx)
	if !ok {
		return nil, c.dict.OutOfRange("location index", idx, pprofdict.Locations)
	}
	loc := &profile.Location{
		ID:      uint64(len(c.out.Location) + 1),
		Address: l.Address(),
	}

	if err := c.locationMapping(loc, l.MappingIndex(), idx); err != nil {
		return nil, err
	}
	if err := c.lines(loc, l, idx); err != nil {
		return nil, err
	}
	c.out.Location = append(c.out.Location, loc)
	c.locations[idx] = loc
	return loc, nil
}

// locationMapping converts Location.mapping_index mi (0 for none) of
// location idx.
func (c *converter) locationMapping(loc *profile.Location, mi, idx int32) error {
	if mi == 0 {
		return nil
	}
	m, err := c.mapping(mi)
	if err != nil {
		return fmt.Errorf("location %d: %w", idx, err)
	}
	loc.Mapping = m
	return nil
}

// lines converts Location.lines: OTLP lists inlined frames callee first,
// as pprof does.
func (c *converter) lines(loc *profile.Location, l pprofile.Location, idx int32) error {
	loc.Line = make([]profile.Line, 0, l.Lines().Len())
	for i, ln := range l.Lines().All() {
		fn, err := c.function(ln.FunctionIndex())
		if err != nil {
			return fmt.Errorf("location %d line %d: %w", idx, i, err)
		}
		loc.Line = append(loc.Line, profile.Line{Function: fn, Line: ln.Line(), Column: ln.Column()})
		if loc.Mapping != nil {
			noteLine(loc.Mapping, fn, ln.Line(), i > 0)
		}
	}
	return nil
}

// noteLine records what a line of a mapping says: pprof asks a symbolizer
// only for mappings that lack function names, file names, line numbers or
// inlined frames.
func noteLine(m *profile.Mapping, fn *profile.Function, line int64, inlined bool) {
	m.HasFunctions = m.HasFunctions || fn.Name != ""
	m.HasFilenames = m.HasFilenames || fn.Filename != ""
	m.HasLineNumbers = m.HasLineNumbers || line != 0
	m.HasInlineFrames = m.HasInlineFrames || inlined
}

func (c *converter) function(idx int32) (*profile.Function, error) {
	if fn, ok := c.functions[idx]; ok {
		return fn, nil
	}
	f, ok := c.dict.Function(idx)
	if !ok {
		return nil, c.dict.OutOfRange("function_index", idx, pprofdict.Functions)
	}
	fn := &profile.Function{ID: uint64(len(c.out.Function) + 1), StartLine: f.StartLine()}
	for _, field := range [...]struct {
		name string
		idx  int32
		dst  *string
	}{
		// Function.name, .system_name, .filename
		{"name", f.NameStrindex(), &fn.Name},
		{"system_name", f.SystemNameStrindex(), &fn.SystemName},
		{"filename", f.FilenameStrindex(), &fn.Filename},
	} {
		var err error
		if *field.dst, err = c.str(field.idx); err != nil {
			return nil, fmt.Errorf("function %d %s: %w", idx, field.name, err)
		}
	}
	c.out.Function = append(c.out.Function, fn)
	c.functions[idx] = fn
	return fn, nil
}

func (c *converter) mapping(idx int32) (*profile.Mapping, error) {
	if m, ok := c.mappings[idx]; ok {
		return m, nil
	}
	pm, ok := c.dict.Mapping(idx)
	if !ok {
		return nil, c.dict.OutOfRange("mapping_index", idx, pprofdict.Mappings)
	}
	file, err := c.str(pm.FilenameStrindex())
	if err != nil {
		return nil, fmt.Errorf("mapping %d filename: %w", idx, err)
	}
	m := &profile.Mapping{
		ID:     uint64(len(c.out.Mapping) + 1),
		Start:  pm.MemoryStart(),
		Limit:  pm.MemoryLimit(),
		Offset: pm.FileOffset(),
		File:   file,
	}

	buildID, err := c.buildID(pm, idx)
	if err != nil {
		return nil, err
	}
	m.BuildID = buildID
	c.out.Mapping = append(c.out.Mapping, m)
	c.mappings[idx] = m
	return m, nil
}

// buildID is mapping idx's build id: of Mapping.attribute_indices, only
// the build id has a pprof field (buildIDKeys, in order of preference).
func (c *converter) buildID(pm pprofile.Mapping, idx int32) (string, error) {
	attrs := make(map[string]string, pm.AttributeIndices().Len())
	if err := c.eachAttribute(pm.AttributeIndices(), func(key string, val pcommon.Value) { attrs[key] = val.AsString() }); err != nil {
		return "", fmt.Errorf("mapping %d %w", idx, err)
	}
	return preferredBuildID(attrs), nil
}

// preferredBuildID is the first build id of buildIDKeys a mapping has;
// "" for none.
func preferredBuildID(attrs map[string]string) string {
	for _, k := range buildIDKeys {
		if v := attrs[k]; v != "" {
			return v
		}
	}
	return ""
}

// attribute resolves an attribute_table reference. ok is false for index 0,
// the table's reserved empty entry.
func (c *converter) attribute(idx int32) (key string, val pcommon.Value, ok bool, err error) {
	if idx == 0 {
		return "", pcommon.Value{}, false, nil
	}
	kv, ok := c.dict.AttrEntry(idx)
	if !ok {
		return "", pcommon.Value{}, false, c.dict.OutOfRange("attribute index", idx, pprofdict.Attributes)
	}
	key, err = c.str(kv.KeyStrindex())
	if err != nil {
		return "", pcommon.Value{}, false, fmt.Errorf("attribute %d key: %w", idx, err)
	}
	return key, kv.Value(), true, nil
}

func (c *converter) valueType(vt pprofile.ValueType) (*profile.ValueType, error) {
	typ, err := c.str(vt.TypeStrindex())
	if err != nil {
		return nil, fmt.Errorf("type: %w", err)
	}
	unit, err := c.str(vt.UnitStrindex())
	if err != nil {
		return nil, fmt.Errorf("unit: %w", err)
	}
	return &profile.ValueType{Type: typ, Unit: unit}, nil
}

func (c *converter) str(idx int32) (string, error) {
	s, ok := c.dict.LookupStr(idx)
	if !ok {
		return "", c.dict.OutOfRange("string index", idx, pprofdict.Strings)
	}
	return s, nil
}

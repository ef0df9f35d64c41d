// Package pyroscope reads an OTLP profiles export request the way Grafana
// Pyroscope's OTLP ingester (pkg/ingester/otlp, Aug 2026) does, so that the
// compatibility tests can check what a Pyroscope user would see: the
// service, the profile type and unit, the series labels, the sample labels
// and the totals.
//
// The request is read through protobuf reflection, by field name, so the
// same reading applies to every version of the v1development messages the
// tests decode with (v0.3.0, which Pyroscope pins, and v0.4.0).
//
// The facts it encodes, from Pyroscope's ingester:
//   - the series' service is a sample attribute `service.name`, else the
//     resource's `service.name`, else "unknown_service"; resource and scope
//     attributes are read by their plain `key` and plain string or int
//     value only (string-table references are not resolved);
//   - resource and scope attributes with a value become series labels;
//   - the profile type is "type:unit:period_type:period_unit"; only
//     "samples:count:cpu:nanoseconds" is converted (counts × period, named
//     process_cpu), otherwise the name is the period type and values are
//     taken as they are;
//   - a Sample's value is its values, or the number of its timestamps when
//     it has none; with a period set, a Sample whose values are not one per
//     sample type fails the whole request;
//   - sample attributes with a string or int value become sample labels
//     (bools and others are dropped); a Link becomes span_id and trace_id.
package pyroscope // import "github.com/sentryprofile/otelcol-sentryprofile/compat/pyroscope"

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Series is one Pyroscope series of one OTLP profile: a service and its
// profile type, with what its samples add up to.
type Series struct {
	Service     string
	Name        string            // __name__: "process_cpu", "wall", …
	ProfileType string            // type:unit:period_type:period_unit
	Unit        string            // the sample type's unit
	Labels      map[string]string // from the resource and scope attributes
	Total       int64             // sum of the sample values, in Unit
	Samples     int               // pprof samples
	// SampleLabels counts each sample label key over the samples.
	SampleLabels map[string]int
}

// Read returns the series Pyroscope makes of an ExportProfilesServiceRequest
// message, in request order.
func Read(req proto.Message) ([]Series, error) {
	r, err := newRequestReader(req.ProtoReflect())
	if err != nil {
		return nil, err
	}
	var out []Series
	for _, rp := range messages(r.request, "resource_profiles") {
		if out, err = r.readResource(out, rp); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// requestReader holds the request's dictionary tables, which every
// profile's samples index.
type requestReader struct {
	request protoreflect.Message
	strs    protoreflect.List // string_table
	attrs   protoreflect.List // attribute_table
	links   protoreflect.List // link_table
}

func newRequestReader(req protoreflect.Message) (*requestReader, error) {
	dict := message(req, "dictionary")
	if !dict.IsValid() {
		return nil, fmt.Errorf("missing profile metadata dictionary")
	}
	return &requestReader{request: req, strs: list(dict, "string_table"),
		attrs: list(dict, "attribute_table"), links: list(dict, "link_table")}, nil
}

// str is string_table[i].
func (r *requestReader) str(i int64) (string, error) {
	if i < 0 || int(i) >= r.strs.Len() {
		return "", fmt.Errorf("string index %d out of bounds", i)
	}
	return r.strs.Get(int(i)).String(), nil
}

// readResource appends the series of one ResourceProfiles: its service is
// the default of every sample's, its attributes label every series.
func (r *requestReader) readResource(out []Series, rp protoreflect.Message) ([]Series, error) {
	resAttrs := list(message(rp, "resource"), "attributes")
	service := serviceName(resAttrs)
	for _, sp := range messages(rp, "scope_profiles") {
		labels := map[string]string{}
		addLabels(labels, resAttrs)
		addLabels(labels, list(message(sp, "scope"), "attributes"))
		for _, p := range messages(sp, "profiles") {
			bySvc, err := r.readProfile(p)
			if err != nil {
				return nil, err
			}
			out = appendSeries(out, bySvc, service, labels)
		}
	}
	return out, nil
}

func appendSeries(out []Series, bySvc []*Series, service string, labels map[string]string) []Series {
	for _, s := range bySvc {
		if s.Service == "" {
			s.Service = service
		}
		s.Labels = labels
		out = append(out, *s)
	}
	return out
}

// profileShape is what a profile's sample_type and period_type make of its
// series: the profile type, the series name and unit, and whether values
// are counts to multiply by the period.
type profileShape struct {
	profileType, name, unit string
	period                  int64
	toNanos                 bool
}

// shapeOf reads sample_type, period and period_type.
func (r *requestReader) shapeOf(p protoreflect.Message) (profileShape, error) {
	stType, stUnit, err := r.valueType(message(p, "sample_type"))
	if err != nil {
		return profileShape{}, fmt.Errorf("sample type: %w", err)
	}
	shape := profileShape{unit: stUnit, period: int64Field(p, "period")}
	var ptType, ptUnit string
	if pt := message(p, "period_type"); pt.IsValid() && shape.period != 0 {
		if ptType, ptUnit, err = r.valueType(pt); err != nil {
			return profileShape{}, err
		}
	}
	shape.profileType = strings.Join([]string{stType, stUnit, ptType, ptUnit}, ":")
	shape.name = ptType
	shape.convertCPU()
	return shape, nil
}

// convertCPU names the series: CPU sample counts become nanoseconds of
// process_cpu; a profile without a period type is guessed to be
// process_cpu.
func (shape *profileShape) convertCPU() {
	if shape.profileType == "samples:count:cpu:nanoseconds" {
		shape.name, shape.unit, shape.toNanos = "process_cpu", "nanoseconds", true
	}
	if shape.name == "" {
		shape.name = "process_cpu" // Pyroscope's guess
	}
}

// valueType is a ValueType's type and unit.
func (r *requestReader) valueType(vt protoreflect.Message) (string, string, error) {
	if !vt.IsValid() {
		return "", "", fmt.Errorf("missing")
	}
	typ, err := r.str(int64Field(vt, "type_strindex"))
	if err != nil {
		return "", "", err
	}
	unit, err := r.str(int64Field(vt, "unit_strindex"))
	return typ, unit, err
}

// readProfile groups a profile's samples by their service.name attribute.
func (r *requestReader) readProfile(p protoreflect.Message) ([]*Series, error) {
	shape, err := r.shapeOf(p)
	if err != nil {
		return nil, err
	}
	groups := seriesByService{shape: shape, bySvc: map[string]*Series{}}
	for _, s := range messages(p, "samples") {
		value, err := sampleValue(s, shape)
		if err != nil {
			return nil, err
		}
		svc, labels, err := r.sampleLabels(s)
		if err != nil {
			return nil, err
		}
		groups.add(svc, value, labels)
	}
	return groups.series(), nil
}

// sampleValue is a Sample's value: its first value, or the number of its
// timestamps when it has none; counts become nanoseconds of CPU.
func sampleValue(s protoreflect.Message, shape profileShape) (int64, error) {
	values := list(s, "values")
	value := int64(list(s, "timestamps_unix_nano").Len())
	if values.Len() > 0 {
		if shape.period != 0 && values.Len() != 1 {
			return 0, fmt.Errorf("sample values length mismatch %d 1", values.Len())
		}
		value = values.Get(0).Int()
	}
	if shape.toNanos {
		value *= shape.period
	}
	return value, nil
}

// sampleLabels is a Sample's service.name attribute and the keys of its
// other labels: attributes with a value, span_id and trace_id of its link.
func (r *requestReader) sampleLabels(s protoreflect.Message) (string, map[string]bool, error) {
	labels := map[string]bool{}
	svc, err := r.attributeLabels(s, labels)
	if err != nil {
		return "", nil, err
	}
	return svc, labels, r.linkLabels(s, labels)
}

// attributeLabels adds the keys of a Sample's attributes with a value to
// labels, and returns its service.name.
func (r *requestReader) attributeLabels(s protoreflect.Message, labels map[string]bool) (string, error) {
	svc := ""
	indices := list(s, "attribute_indices")
	for i := range indices.Len() {
		key, value, err := r.attribute(indices.Get(i).Int())
		if err != nil {
			return "", err
		}
		switch {
		case key == "service.name":
			svc = value
		case value != "":
			labels[key] = true
		}
	}
	return svc, nil
}

// attribute is attribute_table[idx] as a key and a plain value.
func (r *requestReader) attribute(idx int64) (string, string, error) {
	if idx < 0 || int(idx) >= r.attrs.Len() {
		return "", "", fmt.Errorf("attribute index %d out of bounds", idx)
	}
	a := r.attrs.Get(int(idx)).Message()
	key, err := r.str(int64Field(a, "key_strindex"))
	if err != nil {
		return "", "", err
	}
	return key, anyValue(message(a, "value")), nil
}

// linkLabels adds span_id and trace_id when a Sample's link carries them.
func (r *requestReader) linkLabels(s protoreflect.Message, labels map[string]bool) error {
	li := int64Field(s, "link_index")
	if li == 0 {
		return nil
	}
	if li < 0 || int(li) >= r.links.Len() {
		return fmt.Errorf("link index %d out of bounds", li)
	}
	l := r.links.Get(int(li)).Message()
	if hex.EncodeToString(bytesField(l, "span_id")) != "" {
		labels["span_id"] = true
	}
	if len(bytesField(l, "trace_id")) == 16 {
		labels["trace_id"] = true
	}
	return nil
}

// seriesByService adds up a profile's samples per service, in the order
// the services first appear.
type seriesByService struct {
	shape profileShape
	order []string
	bySvc map[string]*Series
}

func (g *seriesByService) add(svc string, value int64, labels map[string]bool) {
	series := g.bySvc[svc]
	if series == nil {
		series = &Series{Service: svc, Name: g.shape.name, ProfileType: g.shape.profileType, Unit: g.shape.unit, SampleLabels: map[string]int{}}
		g.bySvc[svc] = series
		g.order = append(g.order, svc)
	}
	series.Total += value
	series.Samples++
	for k := range labels {
		series.SampleLabels[k]++
	}
}

func (g *seriesByService) series() []*Series {
	out := make([]*Series, 0, len(g.order))
	for _, svc := range g.order {
		out = append(out, g.bySvc[svc])
	}
	return out
}

func serviceName(attrs protoreflect.List) string {
	fallback := "unknown_service"
	for i := range attrs.Len() {
		kv := attrs.Get(i).Message()
		key := kv.Get(field(kv, "key")).String()
		v := anyValue(message(kv, "value"))
		switch {
		case key == "service.name" && v != "":
			return v
		case key == "process.executable.name" && v != "":
			fallback += ":" + v
		}
	}
	return fallback
}

func addLabels(labels map[string]string, attrs protoreflect.List) {
	for i := range attrs.Len() {
		kv := attrs.Get(i).Message()
		key := kv.Get(field(kv, "key")).String()
		if _, seen := labels[key]; seen {
			continue
		}
		if v := anyValue(message(kv, "value")); v != "" {
			labels[key] = v
		}
	}
}

// anyValue is a plain string or int value as text; "" for anything else,
// an array of one such value included.
func anyValue(v protoreflect.Message) string {
	fd := setValueField(v)
	if fd == nil {
		return ""
	}
	switch fd.Name() {
	case "string_value":
		return v.Get(fd).String()
	case "int_value":
		return strconv.FormatInt(v.Get(fd).Int(), 10)
	case "array_value":
		values := list(v.Get(fd).Message(), "values")
		if values.Len() == 1 {
			return anyValue(values.Get(0).Message())
		}
	}
	return ""
}

// setValueField is the field set in an AnyValue's value oneof, or nil.
func setValueField(v protoreflect.Message) protoreflect.FieldDescriptor {
	if !v.IsValid() {
		return nil
	}
	od := v.Descriptor().Oneofs().ByName("value")
	if od == nil {
		return nil
	}
	return v.WhichOneof(od)
}

func field(m protoreflect.Message, name protoreflect.Name) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		panic(fmt.Sprintf("%s has no field %s", m.Descriptor().FullName(), name))
	}
	return fd
}

func message(m protoreflect.Message, name protoreflect.Name) protoreflect.Message {
	if !m.IsValid() {
		return m
	}
	// An unset message field reads as an invalid (empty, read-only) one.
	return m.Get(field(m, name)).Message()
}

func list(m protoreflect.Message, name protoreflect.Name) protoreflect.List {
	return m.Get(field(m, name)).List()
}

func messages(m protoreflect.Message, name protoreflect.Name) []protoreflect.Message {
	l := list(m, name)
	out := make([]protoreflect.Message, l.Len())
	for i := range out {
		out[i] = l.Get(i).Message()
	}
	return out
}

func int64Field(m protoreflect.Message, name protoreflect.Name) int64 {
	return m.Get(field(m, name)).Int()
}

func bytesField(m protoreflect.Message, name protoreflect.Name) []byte {
	return m.Get(field(m, name)).Bytes()
}

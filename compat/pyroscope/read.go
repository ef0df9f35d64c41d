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
	r := req.ProtoReflect()
	dict := message(r, "dictionary")
	if !dict.IsValid() {
		return nil, fmt.Errorf("missing profile metadata dictionary")
	}
	strs := list(dict, "string_table")
	str := func(i int64) (string, error) {
		if i < 0 || int(i) >= strs.Len() {
			return "", fmt.Errorf("string index %d out of bounds", i)
		}
		return strs.Get(int(i)).String(), nil
	}
	var out []Series
	for _, rp := range messages(r, "resource_profiles") {
		resAttrs := list(message(rp, "resource"), "attributes")
		service := serviceName(resAttrs)
		for _, sp := range messages(rp, "scope_profiles") {
			labels := map[string]string{}
			addLabels(labels, resAttrs)
			addLabels(labels, list(message(sp, "scope"), "attributes"))
			for _, p := range messages(sp, "profiles") {
				bySvc, err := readProfile(p, dict, str)
				if err != nil {
					return nil, err
				}
				for _, s := range bySvc {
					if s.Service == "" {
						s.Service = service
					}
					s.Labels = labels
					out = append(out, *s)
				}
			}
		}
	}
	return out, nil
}

// readProfile groups a profile's samples by their service.name attribute.
func readProfile(p, dict protoreflect.Message, str func(int64) (string, error)) ([]*Series, error) {
	st := message(p, "sample_type")
	if !st.IsValid() {
		return nil, fmt.Errorf("sample type is missing")
	}
	stType, err := str(int64Field(st, "type_strindex"))
	if err != nil {
		return nil, err
	}
	stUnit, err := str(int64Field(st, "unit_strindex"))
	if err != nil {
		return nil, err
	}
	period := int64Field(p, "period")
	var ptType, ptUnit string
	if pt := message(p, "period_type"); pt.IsValid() && period != 0 {
		if ptType, err = str(int64Field(pt, "type_strindex")); err != nil {
			return nil, err
		}
		if ptUnit, err = str(int64Field(pt, "unit_strindex")); err != nil {
			return nil, err
		}
	}
	profileType := strings.Join([]string{stType, stUnit, ptType, ptUnit}, ":")
	name, unit, toNanos := ptType, stUnit, false
	if profileType == "samples:count:cpu:nanoseconds" {
		name, unit, toNanos = "process_cpu", "nanoseconds", true
	}
	if name == "" {
		name = "process_cpu" // Pyroscope's guess
	}

	attrs := list(dict, "attribute_table")
	links := list(dict, "link_table")
	var order []string
	bySvc := map[string]*Series{}
	for _, s := range messages(p, "samples") {
		values := list(s, "values")
		value := int64(list(s, "timestamps_unix_nano").Len())
		if values.Len() > 0 {
			if period != 0 && values.Len() != 1 {
				return nil, fmt.Errorf("sample values length mismatch %d 1", values.Len())
			}
			value = values.Get(0).Int()
		}
		if toNanos {
			value *= period
		}
		svc := ""
		labels := map[string]bool{}
		indices := list(s, "attribute_indices")
		for i := range indices.Len() {
			idx := indices.Get(i).Int()
			if idx < 0 || int(idx) >= attrs.Len() {
				return nil, fmt.Errorf("attribute index %d out of bounds", idx)
			}
			a := attrs.Get(int(idx)).Message()
			key, err := str(int64Field(a, "key_strindex"))
			if err != nil {
				return nil, err
			}
			v := anyValue(message(a, "value"))
			if key == "service.name" {
				svc = v
				continue
			}
			if v != "" {
				labels[key] = true
			}
		}
		if li := int64Field(s, "link_index"); li != 0 {
			if li < 0 || int(li) >= links.Len() {
				return nil, fmt.Errorf("link index %d out of bounds", li)
			}
			l := links.Get(int(li)).Message()
			if hex.EncodeToString(bytesField(l, "span_id")) != "" {
				labels["span_id"] = true
			}
			if len(bytesField(l, "trace_id")) == 16 {
				labels["trace_id"] = true
			}
		}
		series := bySvc[svc]
		if series == nil {
			series = &Series{Service: svc, Name: name, ProfileType: profileType, Unit: unit, SampleLabels: map[string]int{}}
			bySvc[svc] = series
			order = append(order, svc)
		}
		series.Total += value
		series.Samples++
		for k := range labels {
			series.SampleLabels[k]++
		}
	}
	out := make([]*Series, 0, len(order))
	for _, svc := range order {
		out = append(out, bySvc[svc])
	}
	return out, nil
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
	if !v.IsValid() {
		return ""
	}
	od := v.Descriptor().Oneofs().ByName("value")
	if od == nil {
		return ""
	}
	fd := v.WhichOneof(od)
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

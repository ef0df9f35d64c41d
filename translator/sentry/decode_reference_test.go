package sentry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// referenceDecode is the slow, obviously-correct decoder the differential
// tests compare DecodeProfile with: encoding/json into map[string]any, then
// the documented mapping applied field by field. Frame "data" is kept as the
// re-marshalled value, so it is compared by meaning (sameJSON), and the
// objects keyed by id come back in key order (see sortedForCompare).
func referenceDecode(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("trailing data")
	}
	r := refConv{}
	p := &Profile{
		Version:     r.str(root["version"]),
		EventID:     r.str(root["event_id"]),
		ProfilerID:  r.str(root["profiler_id"]),
		ChunkID:     r.str(root["chunk_id"]),
		Platform:    r.str(root["platform"]),
		Release:     r.str(root["release"]),
		Environment: r.str(root["environment"]),
		Dist:        r.str(root["dist"]),
	}
	if _, ok := root["event_id"]; !ok {
		p.EventID = r.str(root["profile_id"])
	}
	p.Timestamp = r.timestamp(root["timestamp"])
	if dev := r.obj(root["device"]); dev != nil {
		p.Device = Device{
			Architecture:   r.str(dev["architecture"]),
			IsEmulator:     r.boolean(dev["is_emulator"]),
			Locale:         r.str(dev["locale"]),
			Manufacturer:   r.str(dev["manufacturer"]),
			Model:          r.str(dev["model"]),
			Classification: r.str(dev["classification"]),
		}
	}
	if o := r.obj(root["os"]); o != nil {
		p.OS = OS{Name: r.str(o["name"]), Version: r.str(o["version"]), BuildNumber: r.str(o["build_number"])}
	}
	if o := r.obj(root["runtime"]); o != nil {
		p.Runtime = Runtime{Name: r.str(o["name"]), Version: r.str(o["version"])}
	}
	p.Present = referencePresence(root)
	if o := r.obj(root["client_sdk"]); o != nil {
		p.ClientSDK = ClientSDK{Name: r.str(o["name"]), Version: r.str(o["version"])}
	}
	if dm := r.obj(root["debug_meta"]); dm != nil {
		for _, v := range r.arr(dm["images"]) {
			img := r.obj(v)
			if img == nil {
				r.fail("image is not an object")
				continue
			}
			p.DebugMeta.Images = append(p.DebugMeta.Images, Image{
				Type:        r.str(img["type"]),
				CodeFile:    r.str(img["code_file"]),
				CodeID:      r.str(img["code_id"]),
				DebugID:     r.str(img["debug_id"]),
				DebugFile:   r.str(img["debug_file"]),
				UUID:        r.str(img["uuid"]),
				Arch:        r.str(img["arch"]),
				ImageAddr:   r.addr(img["image_addr"]),
				ImageVMAddr: r.addr(img["image_vmaddr"]),
				ImageSize:   r.uint(img["image_size"], 64),
			})
		}
	}
	if t := r.obj(root["transaction"]); t != nil {
		p.Transactions = append(p.Transactions, r.transaction(t))
	}
	for _, v := range r.arr(root["transactions"]) {
		t := r.obj(v)
		if t == nil {
			r.fail("transaction is not an object")
			continue
		}
		p.Transactions = append(p.Transactions, r.transaction(t))
	}
	if ms := r.obj(root["measurements"]); ms != nil {
		for name, v := range ms {
			m := r.obj(v)
			if m == nil {
				continue
			}
			meas := Measurement{Name: name, Unit: r.str(m["unit"])}
			for _, vv := range r.arr(m["values"]) {
				mv := r.obj(vv)
				if mv == nil {
					r.fail("measurement value is not an object")
					continue
				}
				meas.Values = append(meas.Values, MeasurementValue{
					ElapsedSinceStartNS: r.uint(mv["elapsed_since_start_ns"], 64),
					Timestamp:           r.nanos(mv["timestamp"]),
					Value:               r.float(mv["value"]),
				})
			}
			p.Measurements = append(p.Measurements, meas)
		}
	}
	if prof := r.obj(root["profile"]); prof != nil {
		for _, v := range r.arr(prof["samples"]) {
			s := r.obj(v)
			if s == nil {
				r.fail("sample is not an object")
				continue
			}
			p.Samples = append(p.Samples, Sample{
				StackID:             r.int(s["stack_id"]),
				ThreadID:            r.id(s["thread_id"]),
				ElapsedSinceStartNS: r.uint(s["elapsed_since_start_ns"], 64),
				Timestamp:           r.nanos(s["timestamp"]),
				QueueAddress:        r.str(s["queue_address"]),
				State:               r.str(s["state"]),
			})
		}
		for _, v := range r.arr(prof["stacks"]) {
			st, ok := v.([]any)
			if !ok {
				r.fail("stack is not an array")
				continue
			}
			idx := make([]int64, 0, len(st))
			for _, f := range st {
				idx = append(idx, r.int(f))
			}
			p.Stacks.Append(idx...)
		}
		for _, v := range r.arr(prof["frames"]) {
			f := r.obj(v)
			if f == nil {
				r.fail("frame is not an object")
				continue
			}
			p.Frames = append(p.Frames, r.frame(f))
		}
		if tms := r.obj(prof["thread_metadata"]); tms != nil {
			for id, v := range tms {
				tm := ThreadMetadata{ThreadID: id}
				if v == nil {
					continue
				}
				o := r.obj(v)
				if o == nil {
					r.fail("thread metadata is not an object")
					continue
				}
				tm.Name = r.str(o["name"])
				if pr, ok := o["priority"]; ok && pr != nil {
					tm.Priority, tm.HasPriority = r.int(pr), true
				}
				p.ThreadMetadata = append(p.ThreadMetadata, tm)
			}
		}
		if qms := r.obj(prof["queue_metadata"]); qms != nil {
			for addr, v := range qms {
				if v == nil {
					continue
				}
				o := r.obj(v)
				if o == nil {
					r.fail("queue metadata is not an object")
					continue
				}
				p.QueueMetadata = append(p.QueueMetadata, QueueMetadata{Address: addr, Label: r.str(o["label"])})
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(p.Stacks.Offsets) == 0 {
		p.Stacks.Offsets = nil
	}
	if len(p.Stacks.FrameIndices) == 0 {
		p.Stacks.FrameIndices = nil
	}
	return p, nil
}

// refConv converts map values, remembering the first type error.
type refConv struct{ err error }

func (r *refConv) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *refConv) obj(v any) map[string]any {
	switch o := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return o
	}
	r.fail("expected object, got %T", v)
	return nil
}

func (r *refConv) arr(v any) []any {
	switch a := v.(type) {
	case nil:
		return nil
	case []any:
		return a
	}
	r.fail("expected array, got %T", v)
	return nil
}

func (r *refConv) str(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	}
	r.fail("expected string, got %T", v)
	return ""
}

func (r *refConv) boolean(v any) OptionalBool {
	switch b := v.(type) {
	case nil:
		return BoolUnset
	case bool:
		return BoolOf(b)
	}
	r.fail("expected bool, got %T", v)
	return BoolUnset
}

func isIntegerText(s string) bool {
	return !strings.ContainsAny(s, ".eE")
}

func (r *refConv) id(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		if !isIntegerText(string(x)) || strings.HasPrefix(string(x), "-") {
			r.fail("id %s is not a non-negative integer", x)
		}
		return string(x)
	}
	r.fail("expected id, got %T", v)
	return ""
}

func (r *refConv) int(v any) int64 {
	n, ok := v.(json.Number)
	if !ok || !isIntegerText(string(n)) {
		r.fail("expected integer, got %v", v)
		return 0
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		r.fail("%v", err)
	}
	return i
}

func (r *refConv) uint(v any, bits int) uint64 {
	var text string
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		text = x
	case json.Number:
		if !isIntegerText(string(x)) {
			r.fail("expected integer, got %s", x)
			return 0
		}
		text = string(x)
	default:
		r.fail("expected unsigned integer, got %T", v)
		return 0
	}
	u, err := strconv.ParseUint(text, 10, bits)
	if err != nil {
		r.fail("%v", err)
	}
	return u
}

func (r *refConv) addr(v any) uint64 {
	s, ok := v.(string)
	if !ok {
		return r.uint(v, 64)
	}
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		n, ok := new(big.Int).SetString(s[2:], 16)
		if !ok || n.Sign() < 0 || n.BitLen() > 64 || strings.ContainsAny(s[2:], "+-_") {
			r.fail("bad hex address %q", s)
			return 0
		}
		return n.Uint64()
	}
	return r.uint(s, 64)
}

func (r *refConv) float(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			r.fail("%v", err)
		}
		return f
	}
	r.fail("expected number, got %T", v)
	return 0
}

// seconds converts decimal seconds to whole seconds and nanoseconds
// truncated toward zero, with math/big.
func (r *refConv) seconds(v any) (sec, nsec int64, ok bool) {
	var text string
	switch x := v.(type) {
	case nil:
		return 0, 0, true
	case string:
		text = x
	case json.Number:
		text = string(x)
	default:
		r.fail("expected seconds, got %T", v)
		return 0, 0, false
	}
	if !secondsGrammar.MatchString(text) {
		r.fail("bad seconds %q", text)
		return 0, 0, false
	}
	rat, okRat := new(big.Rat).SetString(text)
	if !okRat {
		r.fail("bad seconds %q", text)
		return 0, 0, false
	}
	ns := new(big.Int).Quo(new(big.Int).Mul(rat.Num(), big.NewInt(1e9)), rat.Denom())
	s, ns2 := new(big.Int).QuoRem(ns, big.NewInt(1e9), new(big.Int))
	if !s.IsInt64() {
		r.fail("seconds out of range %q", text)
		return 0, 0, false
	}
	return s.Int64(), ns2.Int64(), true
}

func (r *refConv) nanos(v any) int64 {
	sec, nsec, ok := r.seconds(v)
	if !ok {
		return 0
	}
	ns, fits := nanosOf(sec, nsec)
	if !fits {
		r.fail("nanoseconds out of range")
	}
	return ns
}

// secondsGrammar is a timestamp's decimal text: JSON's number, leading
// zeros allowed.
var secondsGrammar = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// nanosOf is sec*1e9+nsec, and whether it fits an int64, with math/big.
func nanosOf(sec, nsec int64) (int64, bool) {
	ns := new(big.Int).Add(new(big.Int).Mul(big.NewInt(sec), big.NewInt(1e9)), big.NewInt(nsec))
	return ns.Int64(), ns.IsInt64()
}

func (r *refConv) timestamp(v any) time.Time {
	if s, ok := v.(string); ok {
		if s == "" {
			return time.Time{}
		}
		if len(s) > 4 && s[4] == '-' {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				r.fail("%v", err)
			}
			if _, fits := nanosOf(t.Unix(), int64(t.Nanosecond())); !fits {
				r.fail("timestamp out of range")
			}
			return t.UTC()
		}
	}
	sec, nsec, ok := r.seconds(v)
	if !ok || v == nil {
		return time.Time{}
	}
	if _, fits := nanosOf(sec, nsec); !fits {
		r.fail("timestamp out of range")
	}
	return time.Unix(sec, nsec).UTC()
}

func (r *refConv) transaction(t map[string]any) Transaction {
	return Transaction{
		ID:              r.str(t["id"]),
		Name:            r.str(t["name"]),
		TraceID:         r.str(t["trace_id"]),
		SegmentID:       r.str(t["segment_id"]),
		ActiveThreadID:  r.id(t["active_thread_id"]),
		RelativeStartNS: r.uint(t["relative_start_ns"], 64),
		RelativeEndNS:   r.uint(t["relative_end_ns"], 64),
	}
}

// canonicalOrAlias reads the canonical key when present, else its alias.
func canonicalOrAlias(o map[string]any, canonical, alias string) any {
	if v, ok := o[canonical]; ok {
		return v
	}
	return o[alias]
}

func (r *refConv) frame(f map[string]any) Frame {
	fr := Frame{
		Function:        r.str(canonicalOrAlias(f, "function", "name")),
		RawFunction:     r.str(f["raw_function"]),
		Symbol:          r.str(f["symbol"]),
		Module:          r.str(f["module"]),
		Package:         r.str(f["package"]),
		Filename:        r.str(canonicalOrAlias(f, "filename", "file")),
		AbsPath:         r.str(f["abs_path"]),
		Lineno:          uint32(r.uint(canonicalOrAlias(f, "lineno", "line"), 32)),
		Colno:           uint32(r.uint(canonicalOrAlias(f, "colno", "column"), 32)),
		InApp:           r.boolean(f["in_app"]),
		Platform:        r.str(f["platform"]),
		InstructionAddr: r.addr(f["instruction_addr"]),
		SymbolAddr:      r.addr(canonicalOrAlias(f, "symbol_addr", "sym_addr")),
		ImageAddr:       r.addr(f["image_addr"]),
		AddrMode:        r.str(f["addr_mode"]),
		Status:          r.str(f["status"]),
	}
	if d, ok := f["data"]; ok && d != nil {
		b, err := json.Marshal(d)
		if err != nil {
			r.fail("%v", err)
		}
		fr.Data = string(b)
	}
	return fr
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	var va, vb any
	da := json.NewDecoder(strings.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(strings.NewReader(b))
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// sortedForCompare returns a copy of p whose id-keyed lists are in key order
// and whose frame data is cleared (compare it with sameJSON first), so that a
// map-based reference can be compared with the order-keeping decoder.
func sortedForCompare(p *Profile) *Profile {
	c := *p
	c.ThreadMetadata = append([]ThreadMetadata(nil), p.ThreadMetadata...)
	sort.Slice(c.ThreadMetadata, func(i, j int) bool { return c.ThreadMetadata[i].ThreadID < c.ThreadMetadata[j].ThreadID })
	c.QueueMetadata = append([]QueueMetadata(nil), p.QueueMetadata...)
	sort.Slice(c.QueueMetadata, func(i, j int) bool { return c.QueueMetadata[i].Address < c.QueueMetadata[j].Address })
	c.Measurements = append([]Measurement(nil), p.Measurements...)
	sort.Slice(c.Measurements, func(i, j int) bool { return c.Measurements[i].Name < c.Measurements[j].Name })
	c.Frames = append([]Frame(nil), p.Frames...)
	for i := range c.Frames {
		c.Frames[i].Data = ""
	}
	canonicalEmpty(&c)
	return &c
}

// canonicalEmpty turns empty slices into nil, the decoder's convention.
// referencePresence lists the metadata fields root carries as strings (or,
// for objects, as non-null values), the documented meaning of Present.
func referencePresence(root map[string]any) Fields {
	var present Fields
	isString := func(obj map[string]any, key string) bool {
		_, ok := obj[key].(string)
		return ok
	}
	for key, f := range map[string]Fields{"platform": FieldPlatform, "release": FieldRelease, "environment": FieldEnvironment, "dist": FieldDist} {
		if isString(root, key) {
			present |= f
		}
	}
	if ts, ok := root["timestamp"]; ok && ts != nil && ts != "" {
		present |= FieldTimestamp
	}
	for _, o := range []struct {
		key    string
		object Fields
		fields map[string]Fields
	}{
		{"device", FieldDevice, map[string]Fields{"architecture": FieldDeviceArchitecture, "locale": FieldDeviceLocale,
			"manufacturer": FieldDeviceManufacturer, "model": FieldDeviceModel, "classification": FieldDeviceClassification}},
		{"os", FieldOS, map[string]Fields{"name": FieldOSName, "version": FieldOSVersion, "build_number": FieldOSBuildNumber}},
		{"runtime", FieldRuntime, map[string]Fields{"name": FieldRuntimeName, "version": FieldRuntimeVersion}},
		{"client_sdk", FieldClientSDK, map[string]Fields{"name": FieldClientSDKName, "version": FieldClientSDKVersion}},
	} {
		obj, ok := root[o.key].(map[string]any)
		if !ok {
			continue
		}
		present |= o.object
		for key, f := range o.fields {
			if isString(obj, key) {
				present |= f
			}
		}
	}
	return present
}

func canonicalEmpty(p *Profile) {
	if len(p.ThreadMetadata) == 0 {
		p.ThreadMetadata = nil
	}
	if len(p.QueueMetadata) == 0 {
		p.QueueMetadata = nil
	}
	if len(p.Measurements) == 0 {
		p.Measurements = nil
	}
	if len(p.Frames) == 0 {
		p.Frames = nil
	}
	if len(p.Samples) == 0 {
		p.Samples = nil
	}
	if len(p.Transactions) == 0 {
		p.Transactions = nil
	}
	if len(p.DebugMeta.Images) == 0 {
		p.DebugMeta.Images = nil
	}
	if len(p.Stacks.Offsets) == 0 {
		p.Stacks.Offsets = nil
	}
	if len(p.Stacks.FrameIndices) == 0 {
		p.Stacks.FrameIndices = nil
	}
	for i := range p.Measurements {
		if len(p.Measurements[i].Values) == 0 {
			p.Measurements[i].Values = nil
		}
	}
}

// diffProfiles compares the decoder's result with the reference's and
// describes the first difference.
func diffProfiles(got, want *Profile) string {
	if len(got.Frames) != len(want.Frames) {
		return fmt.Sprintf("frames: %d, reference %d", len(got.Frames), len(want.Frames))
	}
	for i := range got.Frames {
		if !sameJSON(got.Frames[i].Data, want.Frames[i].Data) {
			return fmt.Sprintf("frames[%d].data: %q, reference %q", i, got.Frames[i].Data, want.Frames[i].Data)
		}
	}
	g, w := sortedForCompare(got), sortedForCompare(want)
	gv, wv := reflect.ValueOf(g).Elem(), reflect.ValueOf(w).Elem()
	for i := 0; i < gv.NumField(); i++ {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			return fmt.Sprintf("%s:\n got  %#v\n want %#v", gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
	return ""
}

// The whole seconds of the first and last instants a timestamp can hold
// (translator/internal/sentrytime), for the generators.
var minTimestampSeconds, maxTimestampSeconds = sentrytime.Earliest.Unix() + 1, sentrytime.Latest.Unix() - 1

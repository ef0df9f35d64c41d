// Package pprofdict reads the tables of a pprofile.ProfilesDictionary by
// index, every index bounds-checked: the one reader the exporter's
// conversion (translator/profilesout), the symbolication processor and the
// pprof conversion (internal/pprofconv) share. An index out of range, as a
// malformed or hostile OTLP producer may send, reads as absent; a caller
// that must report it asks OutOfRange for the error.
//
// Index 0 of the string, attribute, mapping and link tables is OTLP's
// "none": Str reads it as "", Attr and EachAttr skip it.
package pprofdict // import "github.com/sentryprofile/otelcol-sentryprofile/internal/pprofdict"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// Reader reads one dictionary; New makes one. It holds the tables, not a copy of them: what is appended to the
// dictionary after New is read too.
type Reader struct {
	dict      pprofile.ProfilesDictionary
	strings   pcommon.StringSlice
	attrs     pprofile.KeyValueAndUnitSlice
	functions pprofile.FunctionSlice
	locations pprofile.LocationSlice
	mappings  pprofile.MappingSlice
	stacks    pprofile.StackSlice
	links     pprofile.LinkSlice
}

// New is the reader of dict.
func New(dict pprofile.ProfilesDictionary) Reader {
	return Reader{
		dict:      dict,
		strings:   dict.StringTable(),
		attrs:     dict.AttributeTable(),
		functions: dict.FunctionTable(),
		locations: dict.LocationTable(),
		mappings:  dict.MappingTable(),
		stacks:    dict.StackTable(),
		links:     dict.LinkTable(),
	}
}

// Dictionary is the dictionary r reads.
func (r Reader) Dictionary() pprofile.ProfilesDictionary { return r.dict }

// Str is string i; "" for 0 and out of range.
func (r Reader) Str(i int32) string {
	if i <= 0 || int(i) >= r.strings.Len() {
		return ""
	}
	return r.strings.At(int(i))
}

// LookupStr is string i and whether the table has it. Index 0 is "" even
// in an empty table: a producer that did not seed the reserved entry still
// means the empty string by it.
func (r Reader) LookupStr(i int32) (string, bool) {
	if i == 0 && r.strings.Len() == 0 {
		return "", true
	}
	if i < 0 || int(i) >= r.strings.Len() {
		return "", false
	}
	return r.strings.At(int(i)), true
}

// AttrEntry is entry i of the attribute table, 0 included, and whether the
// table has it.
func (r Reader) AttrEntry(i int32) (pprofile.KeyValueAndUnit, bool) {
	if i < 0 || int(i) >= r.attrs.Len() {
		return pprofile.KeyValueAndUnit{}, false
	}
	return r.attrs.At(int(i)), true
}

// Attr is the key and value of attribute i; false for 0 and out of range.
// A key index out of range reads as "".
func (r Reader) Attr(i int32) (key string, v pcommon.Value, ok bool) {
	if i == 0 {
		return "", pcommon.Value{}, false
	}
	a, ok := r.AttrEntry(i)
	if !ok {
		return "", pcommon.Value{}, false
	}
	return r.Str(a.KeyStrindex()), a.Value(), true
}

// EachAttr calls f with the key and value of each attribute of indices
// that Attr reads, in order.
func (r Reader) EachAttr(indices pcommon.Int32Slice, f func(key string, v pcommon.Value)) {
	for _, i := range indices.All() {
		if key, v, ok := r.Attr(i); ok {
			f(key, v)
		}
	}
}

// Function is function i and whether the table has it.
func (r Reader) Function(i int32) (pprofile.Function, bool) {
	if i < 0 || int(i) >= r.functions.Len() {
		return pprofile.Function{}, false
	}
	return r.functions.At(int(i)), true
}

// Location is location i and whether the table has it.
func (r Reader) Location(i int32) (pprofile.Location, bool) {
	if i < 0 || int(i) >= r.locations.Len() {
		return pprofile.Location{}, false
	}
	return r.locations.At(int(i)), true
}

// Mapping is mapping i and whether the table has it; index 0, "no
// mapping", is read like any other.
func (r Reader) Mapping(i int32) (pprofile.Mapping, bool) {
	if i < 0 || int(i) >= r.mappings.Len() {
		return pprofile.Mapping{}, false
	}
	return r.mappings.At(int(i)), true
}

// Stack is stack i and whether the table has it.
func (r Reader) Stack(i int32) (pprofile.Stack, bool) {
	if i < 0 || int(i) >= r.stacks.Len() {
		return pprofile.Stack{}, false
	}
	return r.stacks.At(int(i)), true
}

// Link is link i and whether the table has it.
func (r Reader) Link(i int32) (pprofile.Link, bool) {
	if i < 0 || int(i) >= r.links.Len() {
		return pprofile.Link{}, false
	}
	return r.links.At(int(i)), true
}

// Table names one table of the dictionary.
type Table uint8

// The tables, as OutOfRange and Len name them.
const (
	Strings Table = iota
	Attributes
	Functions
	Locations
	Mappings
	Stacks
	Links
)

// Len is the number of entries of table t.
func (r Reader) Len(t Table) int {
	switch t {
	case Strings:
		return r.strings.Len()
	case Attributes:
		return r.attrs.Len()
	case Functions:
		return r.functions.Len()
	case Locations:
		return r.locations.Len()
	case Mappings:
		return r.mappings.Len()
	case Stacks:
		return r.stacks.Len()
	case Links:
		return r.links.Len()
	}
	return 0
}

// OutOfRange is the error of a reference, named field by its holder, to
// entry i of table t, which does not have it.
func (r Reader) OutOfRange(field string, i int32, t Table) error {
	return fmt.Errorf("%s %d out of range [0, %d)", field, i, r.Len(t))
}

// Attrs is the attribute table read once into flat arrays, key and value
// by index: for a caller that reads every sample's and location's
// attributes, resolving each key through the string table on every
// reference would dominate its work.
type Attrs struct {
	Keys   []string
	Values []pcommon.Value
}

// ResolveAttrs reads the attribute table into Attrs; entry 0 and entries
// whose key index is out of range have key "".
func (r Reader) ResolveAttrs() Attrs {
	n := r.attrs.Len()
	a := Attrs{Keys: make([]string, n), Values: make([]pcommon.Value, n)}
	for i := range n {
		kv := r.attrs.At(i)
		a.Keys[i], a.Values[i] = r.Str(kv.KeyStrindex()), kv.Value()
	}
	return a
}

// Each calls f with the key and value of each in-range attribute of
// indices (0 is none), in order.
func (a *Attrs) Each(indices pcommon.Int32Slice, f func(key string, v pcommon.Value)) {
	for i := range indices.Len() {
		idx := indices.At(i)
		if idx <= 0 || int(idx) >= len(a.Keys) {
			continue
		}
		f(a.Keys[idx], a.Values[idx])
	}
}

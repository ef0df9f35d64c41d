package profilesin

import (
	"hash/maphash"
	"math"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// dictionaryBuilder appends to a pprofile.ProfilesDictionary without ever
// adding an entry twice. It keeps its own maps keyed by comparable structs:
// the pprofile Set* helpers scan their table linearly, which is quadratic on a
// chunk with thousands of frames and stacks.
type dictionaryBuilder struct {
	dict pprofile.ProfilesDictionary

	strings   map[string]int32
	functions map[functionKey]int32
	links     map[linkKey]int32
	attrs     map[attrKey]int32

	// Stacks and structured attribute values are not comparable; they are
	// keyed by a hash, with chains through *Next for the rare collision.
	seed         maphash.Seed
	stackHeads   map[uint64]int32
	stackNext    []int32
	complexHeads map[uint64]int32
	complexNext  map[int32]int32
}

type functionKey struct {
	name, systemName, filename int32
	startLine                  int64
}

type linkKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// attrKey identifies a scalar attribute: num holds ints, bools and the bits
// of doubles, str holds strings.
type attrKey struct {
	key  int32
	kind pcommon.ValueType
	num  uint64
	str  string
}

// dictionarySizes are capacity hints for the tables.
type dictionarySizes struct {
	strings, functions, locations, mappings, stacks, attributes int
}

func newDictionaryBuilder(dict pprofile.ProfilesDictionary, hint dictionarySizes) *dictionaryBuilder {
	b := &dictionaryBuilder{
		strings:      make(map[string]int32, hint.strings+1),
		functions:    make(map[functionKey]int32, hint.functions+1),
		links:        make(map[linkKey]int32),
		attrs:        make(map[attrKey]int32, hint.attributes+1),
		seed:         maphash.MakeSeed(),
		stackHeads:   make(map[uint64]int32, hint.stacks+1),
		stackNext:    make([]int32, 0, hint.stacks+1),
		complexHeads: make(map[uint64]int32),
		complexNext:  make(map[int32]int32),
	}
	b.reset(dict)
	dict.StringTable().EnsureCapacity(hint.strings + 1)
	dict.FunctionTable().EnsureCapacity(hint.functions + 1)
	dict.LocationTable().EnsureCapacity(hint.locations + 1)
	dict.MappingTable().EnsureCapacity(hint.mappings + 1)
	dict.StackTable().EnsureCapacity(hint.stacks + 1)
	dict.AttributeTable().EnsureCapacity(hint.attributes + 1)
	return b
}

// appendStr appends the attribute key=value to attrs when value is not
// empty.
func (b *dictionaryBuilder) appendStr(attrs []int32, key, value string) []int32 {
	if value == "" {
		return attrs
	}
	return append(attrs, b.attrStr(key, value))
}

// reset starts over on an empty dict, keeping the memory of the maps.
func (b *dictionaryBuilder) reset(dict pprofile.ProfilesDictionary) {
	b.dict = dict
	clear(b.strings)
	clear(b.functions)
	clear(b.links)
	clear(b.attrs)
	clear(b.stackHeads)
	clear(b.complexHeads)
	clear(b.complexNext)

	// Index 0 of every table is the zero entry, as OTLP requires: references
	// of 0 mean "none".
	dict.StringTable().Append("")
	b.strings[""] = 0
	dict.FunctionTable().AppendEmpty()
	b.functions[functionKey{}] = 0
	dict.LocationTable().AppendEmpty()
	dict.MappingTable().AppendEmpty()
	dict.StackTable().AppendEmpty()
	b.stackNext = append(b.stackNext[:0], -1)
	dict.LinkTable().AppendEmpty()
	b.links[linkKey{}] = 0
	dict.AttributeTable().AppendEmpty()
}

func (b *dictionaryBuilder) str(s string) int32 {
	if s == "" {
		return 0 // the table's first entry
	}
	if i, ok := b.strings[s]; ok {
		return i
	}
	i := int32(b.dict.StringTable().Len())
	b.dict.StringTable().Append(s)
	b.strings[s] = i
	return i
}

func (b *dictionaryBuilder) function(name, systemName, filename string, startLine int64) int32 {
	k := functionKey{name: b.str(name), systemName: b.str(systemName), filename: b.str(filename), startLine: startLine}
	if i, ok := b.functions[k]; ok {
		return i
	}
	i := int32(b.dict.FunctionTable().Len())
	f := b.dict.FunctionTable().AppendEmpty()
	f.SetNameStrindex(k.name)
	f.SetSystemNameStrindex(k.systemName)
	f.SetFilenameStrindex(k.filename)
	f.SetStartLine(startLine)
	b.functions[k] = i
	return i
}

// link returns the index of the link to a span; 0 (no link) for an empty
// trace id, which OTLP treats as invalid.
func (b *dictionaryBuilder) link(trace pcommon.TraceID, span pcommon.SpanID) int32 {
	if trace.IsEmpty() {
		return 0
	}
	k := linkKey{trace: trace, span: span}
	if i, ok := b.links[k]; ok {
		return i
	}
	i := int32(b.dict.LinkTable().Len())
	l := b.dict.LinkTable().AppendEmpty()
	l.SetTraceID(trace)
	l.SetSpanID(span)
	b.links[k] = i
	return i
}

// stack returns the index of the stack of these locations, leaf first.
func (b *dictionaryBuilder) stack(locations []int32) int32 {
	if len(locations) == 0 {
		return 0
	}
	h := b.hashInt32s(locations)
	head, ok := b.stackHeads[h]
	if ok {
		table := b.dict.StackTable()
		for i := head; i >= 0; i = b.stackNext[i] {
			if int32SliceEqual(table.At(int(i)).LocationIndices(), locations) {
				return i
			}
		}
	} else {
		head = -1
	}
	i := int32(b.dict.StackTable().Len())
	b.dict.StackTable().AppendEmpty().LocationIndices().FromRaw(locations)
	b.stackNext = append(b.stackNext, head)
	b.stackHeads[h] = i
	return i
}

// hashInt32s hashes with a per-builder seed, so that a crafted payload
// cannot aim for collisions.
func (b *dictionaryBuilder) hashInt32s(v []int32) uint64 {
	if len(v) == 0 {
		return maphash.Bytes(b.seed, nil)
	}
	// The hash only has to agree with itself within this process, so the
	// integers are hashed in their memory order, without a copy.
	return maphash.Bytes(b.seed, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
}

func int32SliceEqual(s pcommon.Int32Slice, v []int32) bool {
	if s.Len() != len(v) {
		return false
	}
	for i, x := range v {
		if s.At(i) != x {
			return false
		}
	}
	return true
}

func (b *dictionaryBuilder) attrStr(key, value string) int32 {
	return b.scalarAttr(attrKey{key: b.str(key), kind: pcommon.ValueTypeStr, str: value})
}

func (b *dictionaryBuilder) attrInt(key string, value int64) int32 {
	return b.scalarAttr(attrKey{key: b.str(key), kind: pcommon.ValueTypeInt, num: uint64(value)})
}

func (b *dictionaryBuilder) attrBool(key string, value bool) int32 {
	var n uint64
	if value {
		n = 1
	}
	return b.scalarAttr(attrKey{key: b.str(key), kind: pcommon.ValueTypeBool, num: n})
}

func (b *dictionaryBuilder) scalarAttr(k attrKey) int32 {
	if i, ok := b.attrs[k]; ok {
		return i
	}
	i := int32(b.dict.AttributeTable().Len())
	a := b.dict.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(k.key)
	switch k.kind {
	case pcommon.ValueTypeStr:
		a.Value().SetStr(k.str)
	case pcommon.ValueTypeInt:
		a.Value().SetInt(int64(k.num))
	case pcommon.ValueTypeBool:
		a.Value().SetBool(k.num == 1)
	case pcommon.ValueTypeDouble:
		a.Value().SetDouble(math.Float64frombits(k.num))
	}
	b.attrs[k] = i
	return i
}

// attrValue returns the index of a structured attribute (a map or an array),
// moving v into the table when it is new.
func (b *dictionaryBuilder) attrValue(key string, v pcommon.Value) int32 {
	keyIdx := b.str(key)
	var h maphash.Hash
	h.SetSeed(b.seed)
	writeInt(&h, int64(keyIdx))
	hashValue(&h, v)
	sum := h.Sum64()
	table := b.dict.AttributeTable()
	head, ok := b.complexHeads[sum]
	if !ok {
		head = -1
	} else if i := b.findComplex(table, head, keyIdx, v); i >= 0 {
		return i
	}
	i := int32(table.Len())
	a := table.AppendEmpty()
	a.SetKeyStrindex(keyIdx)
	v.MoveTo(a.Value())
	if head >= 0 {
		b.complexNext[i] = head
	}
	b.complexHeads[sum] = i
	return i
}

// findComplex is the attribute key = v in the chain of same-digest
// attributes from head; -1 for none.
func (b *dictionaryBuilder) findComplex(table pprofile.KeyValueAndUnitSlice, head, key int32, v pcommon.Value) int32 {
	for i := head; i >= 0; {
		if a := table.At(int(i)); a.KeyStrindex() == key && a.Value().Equal(v) {
			return i
		}
		next, more := b.complexNext[i]
		if !more {
			break
		}
		i = next
	}
	return -1
}

func writeInt(h *maphash.Hash, v int64) {
	var buf [8]byte
	for i := range buf {
		buf[i] = byte(v >> (8 * i))
	}
	_, _ = h.Write(buf[:])
}

// hashValue feeds a structural digest of v to h; equal values hash equally.
func hashValue(h *maphash.Hash, v pcommon.Value) {
	_ = h.WriteByte(byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		_, _ = h.WriteString(v.Str())
		_ = h.WriteByte(0)
	case pcommon.ValueTypeInt:
		writeInt(h, v.Int())
	case pcommon.ValueTypeDouble:
		writeInt(h, int64(math.Float64bits(v.Double())))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			_ = h.WriteByte(1)
		}
	case pcommon.ValueTypeBytes:
		_, _ = h.Write(v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		hashSlice(h, v.Slice())
	case pcommon.ValueTypeMap:
		hashMap(h, v.Map())
	}
}

// hashSlice writes a slice value's length and elements in order.
func hashSlice(h *maphash.Hash, s pcommon.Slice) {
	writeInt(h, int64(s.Len()))
	for i := range s.Len() {
		hashValue(h, s.At(i))
	}
}

// hashMap writes a map value's length and entries. Map equality ignores
// order, so the digest must too: the entries' own digests are combined
// with a commutative sum.
func hashMap(h *maphash.Hash, m pcommon.Map) {
	writeInt(h, int64(m.Len()))
	var sum uint64
	for k, e := range m.All() {
		var eh maphash.Hash
		eh.SetSeed(h.Seed())
		_, _ = eh.WriteString(k)
		_ = eh.WriteByte(0)
		hashValue(&eh, e)
		sum += eh.Sum64()
	}
	writeInt(h, int64(sum))
}

package profilesin

import (
	"hash/maphash"
	"math"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// dictionaryBuilder appends to a pprofile.ProfilesDictionary without ever
// adding an entry twice. It finds the entries it made through indexes of
// their own (the pprofile Set* helpers scan their table linearly, which is
// quadratic on a chunk with thousands of frames and stacks): strings,
// functions, scalar attributes and stacks by a hash of their content
// (hashIndex, confirmed against the table or attrKeys), links and
// structured attribute values, which are rare, by Go maps.
type dictionaryBuilder struct {
	dict pprofile.ProfilesDictionary

	strings   hashIndex
	functions hashIndex
	attrs     hashIndex
	stacks    hashIndex
	// attrKeys are the scalar attributes by attribute index (zero for the
	// structured ones), what attrs confirms a candidate against.
	attrKeys []attrKey
	links    map[linkKey]int32

	// seed keys every hash, and hashKey and mixKey (drawn from it) the
	// integer ones (see mixHash), so that a crafted payload cannot aim for
	// collisions.
	seed            maphash.Seed
	hashKey, mixKey uint64
	// Structured attribute values are keyed by a hash, with chains
	// through complexNext for the rare collision.
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
	seed := maphash.MakeSeed()
	b := &dictionaryBuilder{
		links:        make(map[linkKey]int32),
		seed:         seed,
		hashKey:      maphash.Comparable(seed, uint64(0)),
		mixKey:       maphash.Comparable(seed, uint64(1)),
		complexHeads: make(map[uint64]int32),
		complexNext:  make(map[int32]int32),
	}
	b.reset(dict)
	b.reserve(hint.strings, hint.functions, hint.attributes, hint.stacks)
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
	b.strings.reset()
	b.functions.reset()
	b.attrs.reset()
	b.stacks.reset()
	clear(b.links)
	clear(b.complexHeads)
	clear(b.complexNext)

	// Index 0 of every table is the zero entry, as OTLP requires: references
	// of 0 mean "none". The empty string and the empty stack are found
	// without a look-up; the zero function is looked up as any other.
	dict.StringTable().Append("")
	dict.FunctionTable().AppendEmpty()
	h0 := b.functionHash(functionKey{})
	_, p, _ := b.functions.find(h0, func(int32) bool { return false }) // the index is empty
	b.functions.put(p, h0, 0)
	dict.LocationTable().AppendEmpty()
	dict.MappingTable().AppendEmpty()
	dict.StackTable().AppendEmpty()
	dict.LinkTable().AppendEmpty()
	b.links[linkKey{}] = 0
	dict.AttributeTable().AppendEmpty()
	b.attrKeys = append(b.attrKeys[:0], attrKey{})
}

// reserve makes room in the indexes for that many more strings, functions,
// scalar attributes and stacks, so that a large item does not rehash its
// way up.
func (b *dictionaryBuilder) reserve(strings, functions, attrs, stacks int) {
	b.strings.reserve(strings)
	b.functions.reserve(functions)
	b.attrs.reserve(attrs)
	b.stacks.reserve(stacks)
}

func (b *dictionaryBuilder) str(s string) int32 {
	if s == "" {
		return 0 // the table's first entry
	}
	h := maphash.String(b.seed, s)
	table := b.dict.StringTable()
	i, p, ok := b.strings.find(h, func(i int32) bool { return table.At(int(i)) == s })
	if ok {
		return i
	}
	i = int32(table.Len())
	table.Append(s)
	b.strings.put(p, h, i)
	return i
}

func (b *dictionaryBuilder) function(name, systemName, filename string, startLine int64) int32 {
	k := functionKey{name: b.str(name), systemName: b.str(systemName), filename: b.str(filename), startLine: startLine}
	h := b.functionHash(k)
	table := b.dict.FunctionTable()
	i, p, ok := b.functions.find(h, func(i int32) bool { return functionKeyOf(table.At(int(i))) == k })
	if ok {
		return i
	}
	i = int32(table.Len())
	f := table.AppendEmpty()
	f.SetNameStrindex(k.name)
	f.SetSystemNameStrindex(k.systemName)
	f.SetFilenameStrindex(k.filename)
	f.SetStartLine(startLine)
	b.functions.put(p, h, i)
	return i
}

func (b *dictionaryBuilder) functionHash(k functionKey) uint64 {
	return mixHash(mixHash(b.hashKey^uint64(uint32(k.name))<<32^uint64(uint32(k.systemName)), uint64(uint32(k.filename)), b.mixKey), uint64(k.startLine), b.mixKey)
}

func functionKeyOf(f pprofile.Function) functionKey {
	return functionKey{name: f.NameStrindex(), systemName: f.SystemNameStrindex(), filename: f.FilenameStrindex(), startLine: f.StartLine()}
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
	table := b.dict.StackTable()
	i, p, ok := b.stacks.find(h, func(i int32) bool { return int32SliceEqual(table.At(int(i)).LocationIndices(), locations) })
	if ok {
		return i
	}
	i = int32(table.Len())
	table.AppendEmpty().LocationIndices().FromRaw(locations)
	b.stacks.put(p, h, i)
	return i
}

// frameHash is the hash of a frame's Location key: every field of the
// frame, and the mapping its address falls in (the frame type, one of a
// few, is left out). A client can send any number of frames alike in all
// but one field, and each must still land in a slot of its own. Empty strings,
// most of a frame's, cost a comparison; each field is mixed in under its
// own position, so that a value cannot pass for the same value in another
// field.
func (b *dictionaryBuilder) frameHash(f *sentry.Frame, mapping int32) uint64 {
	h := mixHash(b.hashKey^uint64(f.Lineno)<<32^uint64(f.Colno), f.InstructionAddr, b.mixKey)
	h = mixHash(h^uint64(f.InApp)<<32^uint64(uint32(mapping)), f.SymbolAddr, b.mixKey)
	h = mixHash(h, f.ImageAddr, b.mixKey)
	for i, s := range [...]string{f.Function, f.AbsPath, f.Filename, f.Module, f.Package, f.RawFunction, f.Symbol, f.Platform, f.AddrMode, f.Status, f.Data} {
		if s != "" {
			h = mixHash(h^uint64(i+1), maphash.String(b.seed, s), b.mixKey)
		}
	}
	return h
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
	h := mixHash(b.hashKey^uint64(uint32(k.key))<<8^uint64(k.kind), k.num, b.mixKey)
	if k.kind == pcommon.ValueTypeStr {
		h ^= maphash.String(b.seed, k.str)
	}
	i, p, ok := b.attrs.find(h, func(i int32) bool { return b.attrKeys[i] == k })
	if ok {
		return i
	}
	table := b.dict.AttributeTable()
	i = int32(table.Len())
	a := table.AppendEmpty()
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
	b.keepAttrKey(i, k)
	b.attrs.put(p, h, i)
	return i
}

// keepAttrKey records the key of attribute i in attrKeys, zero for the
// structured attributes before it.
func (b *dictionaryBuilder) keepAttrKey(i int32, k attrKey) {
	for int(i) > len(b.attrKeys) {
		b.attrKeys = append(b.attrKeys, attrKey{})
	}
	b.attrKeys = append(b.attrKeys, k)
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

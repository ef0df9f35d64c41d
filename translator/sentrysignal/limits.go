package sentrysignal

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// DefaultMaxMapEntries bounds the entries of one OTLP map a translator
// writes: a record's (or data point's) attributes, and every map nested in
// a free-form value. It is the JavaScript SDKs' normalizeMaxBreadth (the
// most members they send of one object); sentry-python sends at most 10.
// Relay has no count limit: it trims databags by size (extra 256 KiB,
// contexts 8 KiB, 7 levels).
//
// pcommon.Map finds a key by scanning, so each insertion costs up to the
// map's length and n keys cost n²/2 comparisons (60 000 extra keys, a
// 0.9 MB event, took 9–34 s of CPU). The bound caps that cost for maps
// written key by key (a record's attributes from several members); large
// maps written at once are built in linear time anyway (see Entries).
const DefaultMaxMapEntries = 1000

// Truncations counts what the limits cut while translating. A receiver
// that wants to count it sets Options.Truncations to one of its own for a
// call and reads it afterwards; translators only add to it. It is not
// safe for concurrent use: give each call its own.
type Truncations struct {
	// Attributes is the number of map entries (attributes, or members of
	// maps nested in their values) left out at Options.MaxMapEntries.
	Attributes int
	// Messages is the number of event messages whose formatting was cut
	// at the message length limit (sentryevent.MaxFormattedChars).
	Messages int
}

// Limiter writes pcommon maps within Options.MaxMapEntries and counts the
// entries it leaves out, for one record: its count goes to the record's
// DroppedAttributesCount where the record has one, and to
// Options.Truncations. The zero value is not usable; see NewLimiter.
type Limiter struct {
	opts    Options
	dropped int
	// members is the sorting space of putMap, nodeMembers of putNodeMap.
	members     []member
	nodeMembers []NodeMember
}

// NewLimiter returns a Limiter for one record under opts (zero limits take
// their defaults).
func NewLimiter(opts Options) *Limiter {
	return &Limiter{opts: opts.WithDefaults()}
}

// Reset makes l a Limiter for the next record under opts, as NewLimiter
// does, keeping its scratch space: a container's translator resets one
// Limiter per entry rather than making one.
func (l *Limiter) Reset(opts Options) {
	// field by field, the same options not written again: a container's
	// translator resets its Limiter per entry, and each pointer written
	// costs a write barrier while the garbage collector marks
	if opts = opts.WithDefaults(); l.opts != opts {
		l.opts = opts
	}
	l.dropped = 0
	l.members, l.nodeMembers = l.members[:0], l.nodeMembers[:0]
}

// MaxDepth is the depth free-form values are written to (Options.MaxDepth
// with its default).
func (l *Limiter) MaxDepth() int { return l.opts.MaxDepth }

// Dropped is the number of map entries this Limiter left out.
func (l *Limiter) Dropped() int { return l.dropped }

// DroppedCount is Dropped for an OTLP dropped_attributes_count field,
// which is a uint32.
func (l *Limiter) DroppedCount() uint32 {
	if l.dropped > int(^uint32(0)) {
		return ^uint32(0)
	}
	return uint32(l.dropped)
}

func (l *Limiter) drop(n int) {
	l.dropped += n
	if l.opts.Truncations != nil {
		l.opts.Truncations.Attributes += n
	}
}

// Put is pcommon.Map.PutEmpty within the limit: while m holds fewer than
// MaxMapEntries entries it adds key (or resets the value m holds under
// it); once m is full it adds nothing, counts key as dropped and ok is
// false, without looking key up (so a key m already holds keeps its
// value). A call costs at most MaxMapEntries comparisons.
func (l *Limiter) Put(m pcommon.Map, key string) (v pcommon.Value, ok bool) {
	if m.Len() >= l.opts.MaxMapEntries {
		l.drop(1)
		return pcommon.Value{}, false
	}
	return m.PutEmpty(key), true
}

// PutStr is Put and SetStr.
func (l *Limiter) PutStr(m pcommon.Map, key, value string) {
	if v, ok := l.Put(m, key); ok {
		v.SetStr(value)
	}
}

// PutAny is Put and SetAny.
func (l *Limiter) PutAny(m pcommon.Map, key string, x any, depth int) {
	if v, ok := l.Put(m, key); ok {
		l.SetAny(v, x, depth)
	}
}

// PutMap writes the members of obj into m in key order; when they would
// take m past MaxMapEntries, the first keys in that order are kept and the
// rest counted as dropped.
func (l *Limiter) PutMap(m pcommon.Map, obj map[string]any, depth int) {
	l.putMap(m, obj, depth, nil, false)
}

// sortedMembers pushes obj's members to write onto l.members, sorted by
// key, and returns them: the values with their keys, so that writing them
// looks none up again. A null member says no more than an absent one
// (sentry-python writes "mechanism": null); as an empty value, stores that
// print the map as JSON print no value at all.
func (l *Limiter) sortedMembers(obj map[string]any, omit *Omission, inList bool) []member {
	base := len(l.members)
	for k, v := range obj {
		if v != nil && !omit.leavesOut(k, inList) {
			l.members = append(l.members, member{k, v})
		}
	}
	members := l.members[base:]
	sortMembers(members)
	return members
}

// sortMembers sorts members of distinct keys by key: by insertion, keys
// compared inline, for the few members of most objects (a frame's dozen),
// where a sort calling a comparison function cost more than looking each
// value up again.
func sortMembers(members []member) {
	if len(members) > 16 {
		slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].key < members[j-1].key; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
}

// putMap is PutMap; with omit, inList says obj is an element of an array
// under a member called omit.In, so its member omit.Member is left out.
// The members are sorted on l.members, a stack the nested calls share, so
// that a record's maps cost one buffer rather than one slice each.
func (l *Limiter) putMap(m pcommon.Map, obj map[string]any, depth int, omit *Omission, inList bool) {
	base := len(l.members)
	// nested calls push above base and pop back to it; should they grow
	// l.members, members keeps the array it was sorted in
	members := l.sortedMembers(obj, omit, inList)
	defer func() {
		clear(l.members[base:]) // the stack keeps no values alive
		l.members = l.members[:base]
	}()
	child := func(k string) bool { return omit != nil && k == omit.In }
	if m.Len() == 0 && len(members) >= minBulkKeys {
		l.putMembersBulk(m, members, depth, omit, child)
		return
	}
	m.EnsureCapacity(m.Len() + min(len(members), l.opts.MaxMapEntries))
	for _, mb := range members {
		if v, ok := l.Put(m, mb.key); ok {
			l.setAny(v, mb.value, depth, omit, child(mb.key))
		}
	}
}

// putMembersBulk is putMap of many members into an empty map, in time
// linear in their number (see Entries).
func (l *Limiter) putMembersBulk(m pcommon.Map, members []member, depth int, omit *Omission, child func(string) bool) {
	keys := make([]string, len(members))
	for i := range members {
		keys[i] = members[i].key
	}
	values, kept := l.Entries(m, keys)
	for i, mb := range members {
		if kept[i] {
			l.setAny(values[i], mb.value, depth, omit, child(mb.key))
		}
	}
}

package sentrysignal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// ContainerVisitor receives the entries of a container as ScanContainer
// reads them.
type ContainerVisitor interface {
	// Entry is entry index of "items": an object as an *Entry, its
	// members as DecodeAny decodes them but its "attributes" object a
	// *TypedAttributes; an entry of another kind as DecodeAny decodes it.
	// The entry and its attributes are valid only during the call: the
	// scanner reuses them for the next entry.
	Entry(index int, entry any)
	// Restart forgets every entry given so far: the payload has "items"
	// once more, and (as in a decoded object) the last one counts.
	Restart()
}

// ScanContainer reads the {"items": [...]} payload of log and trace_metric
// items in one pass, giving each entry to v as soon as it is read, so that
// a translator writes its record while the entry is at hand and keeps no
// tree of the payload. Entries are the visitor's to refuse, so that one
// entry of a wrong shape costs only itself. It fails when the payload is
// over the size limit, is not JSON (found possibly after some entries were
// given: the visitor's work is then to be dropped), is not such an object,
// or holds more than Options.MaxItems entries (the entries past the limit
// are read, not given).
func ScanContainer(item string, payload []byte, opts Options, v ContainerVisitor) error {
	if err := opts.CheckSize(item, payload); err != nil {
		return err
	}
	s := containerScan{p: newParser(payload), limit: opts.WithDefaults().MaxItems, visitor: v}
	defer s.p.release()
	s.attrs.sent, s.attrs.order, s.attrs.shapes = s.p.entries[:0], s.p.order[:0], s.p.shapes
	defer s.returnAttributes()
	if err := s.scan(); err != nil {
		return PayloadError(item, "", "not JSON", err)
	}
	if !s.isArray {
		return PayloadError(item, "items", "not an items container", nil)
	}
	if s.count > s.limit {
		return PayloadError(item, "items", itoa(s.count)+" entries exceed the limit of "+itoa(s.limit), nil)
	}
	return nil
}

// containerScan is the state of one ScanContainer.
type containerScan struct {
	p       *jsonParser
	limit   int
	visitor ContainerVisitor
	// arrays counts the "items" arrays read; count the entries of the
	// last one; isArray says the last "items" member was an array.
	arrays, count int
	isArray       bool
	// entry and attrs are reused for every entry.
	entry Entry
	attrs TypedAttributes
	// keyLists are the member keys of the last entries read whose keys
	// can be recognised by their text (see entryKey), one list per way an
	// SDK writes its entries (a counter without "unit", a distribution
	// with it); keys is the one the entry being read has sent so far
	// (-1: none), oldestKeys the one a new list replaces.
	keyLists   [4][]string
	keys       int
	oldestKeys int
}

// scan reads the payload as one JSON value, giving the entries of an
// object's "items" to the visitor.
func (s *containerScan) scan() error {
	p := s.p
	var err error
	if p.at('{') {
		_, err = p.objectWith(s.containerMember, true)
	} else {
		_, err = p.value()
	}
	if err != nil {
		return err
	}
	// as DecodeAny: any Unicode space may follow the value
	if len(bytes.TrimSpace(p.data[p.pos:])) != 0 {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// returnAttributes gives the typed attributes' space back to the parser,
// holding no value of the payload.
func (s *containerScan) returnAttributes() {
	s.entry.reset()
	sent := s.attrs.sent[:cap(s.attrs.sent)]
	clear(sent)
	s.attrs.forget()
	s.p.entries, s.p.order, s.p.shapes = sent[:0], s.attrs.order[:0], s.attrs.shapes
}

// containerMember reads a member of the container's object: the entries
// of "items" one by one, anything else read and left.
func (s *containerScan) containerMember(key string) (any, error) {
	if key != "items" {
		_, err := s.p.value()
		return nil, err
	}
	s.isArray = s.p.at('[')
	if !s.isArray {
		_, err := s.p.value()
		return nil, err
	}
	if s.arrays > 0 {
		s.visitor.Restart()
	}
	s.arrays++
	s.count = 0
	_, err := s.p.arrayWith(s.element, true)
	return nil, err
}

// element reads one entry and gives it to the visitor, within the limit.
func (s *containerScan) element() (any, error) {
	index := s.count
	s.count++
	var x any
	var err error
	if s.p.at('{') {
		x, err = s.entryObject()
	} else {
		x, err = s.p.value()
	}
	if err == nil && index < s.limit {
		s.visitor.Entry(index, x)
	}
	// the next entry overwrites this one's members: clearing them each
	// time cost write barriers while the collector marks (returnAttributes
	// clears them once, at the end)
	s.entry.members = s.entry.members[:0]
	return nil, err
}

// entryObject reads an entry object onto the reused entry: "attributes",
// when an object, as typed attributes.
func (s *containerScan) entryObject() (any, error) {
	p := s.p
	s.entry.p = p
	if empty, err := p.openObject(); empty || err != nil {
		return &s.entry, err
	}
	for {
		key, err := s.entryKey()
		if err != nil {
			return nil, err
		}
		if err := s.entryMember(key); err != nil {
			return nil, err
		}
		if end, err := p.next('}', "after an object value"); end || err != nil {
			p.depth--
			s.noteKeys()
			return &s.entry, err
		}
	}
}

// entryKey reads the key of the entry's next member and the ":" after it:
// the key an entry before of the same keys sent in the same place when the
// payload has its very text there (an SDK writes the members of its
// entries in one order), else as memberKey reads it. When the list of keys
// recalled has another key there, another list that has the keys read so
// far and this one goes on; once none has, the entry's keys are read.
func (s *containerScan) entryKey() (string, error) {
	p, i := s.p, len(s.entry.members)
	if s.keys >= 0 && !s.keyAt(s.keys, i) || s.keys < 0 && i == 0 {
		s.keys = s.otherKeys(i)
	}
	if s.keys < 0 {
		return p.memberKey()
	}
	key := s.keyLists[s.keys][i]
	p.pos += len(key) + 2
	if !p.at(':') {
		return "", p.syntaxError("after an object key")
	}
	p.pos++
	return key, nil
}

// keyAt says whether list k's key i is the text at pos.
func (s *containerScan) keyAt(k, i int) bool {
	keys := s.keyLists[k]
	return i < len(keys) && s.p.quotedAt(keys[i])
}

// otherKeys is a list of keys other than the one recalled whose first i
// are the keys read and whose key i is the text at pos; -1 when none is.
func (s *containerScan) otherKeys(i int) int {
	for k := range s.keyLists {
		if k != s.keys && s.keyAt(k, i) && sameKeys(s.keyLists[k][:i], s.entry.members) {
			return k
		}
	}
	return -1
}

// sameKeys says whether members have the keys.
func sameKeys(keys []string, members []entryMember) bool {
	for i := range keys {
		if members[i].key != keys[i] {
			return false
		}
	}
	return true
}

// noteKeys keeps the keys of the entry read for the next ones, when no
// list has them; the entry after starts with the list that has.
func (s *containerScan) noteKeys() {
	if s.keys >= 0 && len(s.keyLists[s.keys]) == len(s.entry.members) {
		return
	}
	for _, m := range s.entry.members {
		if !plainText(m.key) {
			s.keys = -1 // a key only found by reading it
			return
		}
	}
	k := s.oldestKeys
	s.oldestKeys = (k + 1) % len(s.keyLists)
	keys := s.keyLists[k][:0]
	for _, m := range s.entry.members {
		keys = append(keys, m.key)
	}
	s.keyLists[k], s.keys = keys, k
}

// entryMember reads one member of an entry onto the reused entry.
func (s *containerScan) entryMember(key string) error {
	m := entryMember{key: key}
	var err error
	switch p := s.p; {
	case key == "attributes" && p.at('{'):
		m.value, err = p.typedAttributes(&s.attrs)
	case p.at('"'):
		m.value, err = p.entryString(&m)
	case p.pos < len(p.data) && isNumberStart(p.data[p.pos]):
		var b []byte
		b, err = p.numberBytes()
		m.text, m.start, m.end = numberText, p.pos-len(b), p.pos
	default:
		m.value, err = p.value()
	}
	if err == nil {
		s.entry.members = append(s.entry.members, m)
	}
	return err
}

// entryString reads a string member of an entry: one without escapes is
// kept as its place in the payload (m), made a string only when a
// translator reads it; the others are unquoted.
func (p *jsonParser) entryString(m *entryMember) (any, error) {
	start := p.pos + 1
	if _, ok := p.plain(); ok {
		m.text, m.start, m.end = stringText, start, p.pos-1
		return nil, nil
	}
	s, err := p.unquote(p.pos)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// typedAttributes reads an entry's "attributes" object into into: the same
// attributes, types and values PutTyped reads from the object as a map, a
// repeated key keeping its last value. into's entries are reused.
func (p *jsonParser) typedAttributes(into *TypedAttributes) (any, error) {
	// into's attributes are overwritten, not cleared: what an earlier
	// entry left past the new ones lives no longer than the scan, whose
	// TypedAttributes into is
	into.sent = into.sent[:0]
	into.recall, into.recallAt, into.before, into.unchanged = nil, 0, 0, false
	into.read1, into.virtual, into.virtualOf = 0, 0, nil
	into.read++
	p.typed = into
	err := p.typedMembers()
	p.typed = nil
	if err != nil {
		return nil, err
	}
	into.order = into.keptOrderOf(into.order[:0], p.data)
	return into, nil
}

// openObject enters the object at pos (its "{"), within the nesting
// limit; empty says it was "{}", read whole.
func (p *jsonParser) openObject() (empty bool, err error) {
	if err := p.enter(); err != nil {
		return false, err
	}
	p.pos++ // '{'
	if p.at('}') {
		p.pos++
		p.depth--
		return true, nil
	}
	return false, nil
}

// typedMembers reads the attributes object at pos onto p.typed: what
// objectWith(p.typedMember, true) reads, without its stack of members and
// its calls through a function value (an attribute is the most read
// member of a container).
func (p *jsonParser) typedMembers() error {
	if empty, err := p.openObject(); empty || err != nil {
		return err
	}
	a := p.typed
	a.objectAt = p.pos
	a.recall = a.shapeAfter(p, 0)
	if p.sameAttributes() {
		if end, err := p.next('}', "after an object value"); end || err != nil {
			p.depth--
			return err
		}
	}
	for {
		start := p.pos
		if !p.sameAttribute() {
			key, err := p.attributeKey()
			if err != nil {
				return err
			}
			if err := p.typedMember(key); err != nil {
				return err
			}
		}
		e := &a.sent[len(a.sent)-1]
		e.start, e.end = start, p.pos
		if end, err := p.next('}', "after an object value"); end || err != nil {
			p.depth--
			return err
		}
	}
}

// sameAttribute reads the next attribute when the payload has at pos the
// very text the last entry of the recalled shape had in its place: the
// same text is the same attribute, taken as it was read then (most
// attributes of a container are the same in every entry: release,
// environment, SDK, server). False, leaving pos, when it is not.
func (p *jsonParser) sameAttribute() bool {
	a := p.typed
	sh, i := a.recall, len(a.sent)
	if sh == nil || i >= len(sh.members) || !sh.members[i].whole {
		return false
	}
	m := &sh.members[i]
	if !bytes.HasPrefix(p.data[p.pos:], m.raw) {
		return false
	}
	p.pos += len(m.raw)
	a.sent = append(a.sent, typedEntry{key: sh.keys[i], isObject: true, textKind: m.kind, typ: m.typ, text: m.text, plainString: m.plain, same: true})
	return true
}

// sameAttributes reads the first attributes when the payload has at pos
// the very text the last entry of a remembered shape had: found by one
// comparison of the attributes' text, up to the first byte that differs
// (most attributes of a container are the same in every entry: release,
// environment, SDK, server), where reading them one by one cost a
// comparison and a look for the separator each. The shape whose text goes
// on longest is recalled. False, leaving pos, when not one attribute was
// the same.
func (p *jsonParser) sameAttributes() bool {
	a := p.typed
	rest := p.data[p.pos:]
	var best *shape
	taken, lead := 0, false
	// a shape of other attributes most often differs within the first
	// block: only the shapes that do not are compared further, unless none
	for pass := 0; pass < 2 && !lead; pass++ {
		for k := range a.shapes {
			sh := &a.shapes[k]
			if len(sh.keys) == 0 || !sh.members[0].whole {
				continue
			}
			if pass == 0 {
				n := min(len(rest), len(sh.object), prefixBlock)
				if !bytes.Equal(rest[:n], sh.object[:n]) {
					continue
				}
				lead = true
			}
			if n := sh.sameIn(rest); n > taken {
				best, taken = sh, n
			}
		}
	}
	if best == nil {
		return false
	}
	a.recall = best
	a.sent = slices.Grow(a.sent, taken)[:taken] // written only when needed
	a.virtual, a.virtualOf = taken, best
	p.pos = a.objectAt + best.members[taken-1].end
	return true
}

// sameIn is the number of the shape's first attributes that text begins
// with, each the very text the shape's last entry sent.
func (sh *shape) sameIn(text []byte) int {
	same := commonPrefix(text, sh.object)
	n := 0
	for n < len(sh.members) && sh.members[n].whole && sh.members[n].end <= same {
		n++
	}
	return n
}

// prefixBlock is the block commonPrefix compares at a time.
const prefixBlock = 64

// commonPrefix is the length of the longest common prefix of a and b:
// found by comparing 256 then 64 bytes at a time (bytes.Equal's vector
// code), then eight bytes at a time within the block that differs.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4*prefixBlock <= n && bytes.Equal(a[i:i+4*prefixBlock], b[i:i+4*prefixBlock]) {
		i += 4 * prefixBlock
	}
	for i+prefixBlock <= n && bytes.Equal(a[i:i+prefixBlock], b[i:i+prefixBlock]) {
		i += prefixBlock
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// attributeKey reads the key of the next attribute and the ":" after it:
// the key an earlier entry of the same shape sent in the same place when
// the payload has its very text there (see TypedAttributes.recall), else
// as memberKey reads it.
func (p *jsonParser) attributeKey() (string, error) {
	a := p.typed
	i := len(a.sent)
	if a.recall != nil && !a.recall.keyAt(p, i) {
		// shapes may share their first keys: another one that sent the
		// keys read so far may go on with this one
		a.recall, a.recallAt = a.shapeAfter(p, i), i
	}
	if sh := a.recall; sh != nil {
		p.pos += len(sh.keys[i]) + 2
		if !p.at(':') {
			return "", p.syntaxError("after an object key")
		}
		p.pos++
		return sh.keys[i], nil
	}
	return p.memberKey()
}

// keyAt says whether the shape's key i is the text at pos.
func (sh *shape) keyAt(p *jsonParser, i int) bool {
	return i < len(sh.keys) && p.quotedAt(sh.keys[i])
}

// shapeAfter is a remembered shape whose first i keys are those read and
// whose key i is the text at pos.
func (a *TypedAttributes) shapeAfter(p *jsonParser, i int) *shape {
	a.materialize() // its keys are compared to the shapes'
	for k := range a.shapes {
		if sh := &a.shapes[k]; len(sh.keys) > 0 && sh.keyAt(p, i) && sh.sentFirst(a.sent[:i]) {
			return sh
		}
	}
	return nil
}

// sentFirst says whether entries have the shape's first keys.
func (sh *shape) sentFirst(entries []typedEntry) bool {
	for i := range entries {
		if entries[i].key != sh.keys[i] {
			return false
		}
	}
	return true
}

// quotedAt says whether the JSON string at pos (after space) is text,
// written without escapes. Only text with no quote, backslash or control
// character (plainText) may be looked for so.
func (p *jsonParser) quotedAt(text string) bool {
	p.skipSpace()
	end := p.pos + 1 + len(text)
	return end < len(p.data) && p.data[p.pos] == '"' && p.data[end] == '"' && string(p.data[p.pos+1:end]) == text
}

// skipQuoted skips the JSON string at pos when it is text (see quotedAt).
func (p *jsonParser) skipQuoted(text string) bool {
	if !p.quotedAt(text) {
		return false
	}
	p.pos += len(text) + 2
	return true
}

// plainText says whether text, quoted, stands in JSON as it is: no quote,
// backslash or control character, which JSON escapes.
func plainText(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < ' ' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// keptOrderOf appends to order the kept order of the attributes read
// (keptOrder): the order of the shape they were recalled by, as an SDK's
// entries from one call site send the same keys in the same order (the
// sort was a twentieth of a log container's translation); else sorted,
// and remembered as a shape in place of the oldest.
func (a *TypedAttributes) keptOrderOf(order []int32, data []byte) []int32 {
	if sh := a.recall; sh != nil && len(sh.keys) == len(a.sent) {
		// the attributes not written are the shape's already, where they
		// were; but those recalled before the shape was (recallAt > 0) were
		// another shape's, and are noted like the rest, lest the shape's
		// text and what it recalls of it part
		sh.note(a.sent[a.virtual:], a.virtual, data, a.objectAt, a.recallAt > 0)
		a.before, sh.last = sh.last, a.read
		return append(order, sh.order...)
	}
	if len(a.sent) == 0 {
		return order // "attributes": {} is no shape to remember
	}
	a.materialize()
	order = keptOrder(order, a.sent)
	for i := range a.sent {
		if !plainText(a.sent[i].key) {
			return order // a key only found by reading it: no shape
		}
	}
	sh := &a.shapes[a.oldest]
	a.oldest = (a.oldest + 1) % len(a.shapes)
	sh.keys = sh.keys[:0]
	for i := range a.sent {
		sh.keys = append(sh.keys, a.sent[i].key)
	}
	sh.order = append(sh.order[:0], order...)
	sh.members = sh.members[:0]
	for range a.sent {
		sh.members = append(sh.members, recalled{})
	}
	sh.note(a.sent, 0, data, a.objectAt, true)
	sh.last, sh.writtenOf, sh.written = a.read, 0, pcommon.Map{}
	// the entry is the shape's: what is written of it may be told (Wrote)
	a.recall, a.recallAt = sh, 0
	return order
}

// note keeps what entries (which have the shape's keys) sent, read from
// data, for the next entry of the shape to recall; but for a new shape
// (all), the attributes taken from the shape, which it has already.
func (sh *shape) note(entries []typedEntry, from int, data []byte, objectAt int, all bool) {
	for k := range entries {
		e, i := &entries[k], from+k
		if e.same && !all {
			sh.members[i].at, sh.members[i].end = e.start-objectAt, e.end-objectAt
			continue
		}
		sh.members[i] = recalled{
			raw: data[e.start:e.end], text: e.text, typ: e.typ, kind: e.textKind,
			plain: e.plainString, whole: e.isObject && e.legacy == nil && e.x == nil,
			at: e.start - objectAt, end: e.end - objectAt,
		}
	}
	if len(entries) > 0 {
		sh.object = data[objectAt:entries[len(entries)-1].end]
	} else if from > 0 {
		sh.object = data[objectAt : objectAt+sh.members[from-1].end]
	} else {
		sh.object = nil
	}
}

// forget empties the shapes, keeping no key alive.
func (a *TypedAttributes) forget() {
	for i := range a.shapes {
		sh := &a.shapes[i]
		clear(sh.keys)
		clear(sh.members)
		sh.keys, sh.members, sh.object = sh.keys[:0], sh.members[:0], nil
		sh.last, sh.writtenOf, sh.written = 0, 0, pcommon.Map{}
	}
	a.recall, a.read = nil, 0
}

// keptOrder appends to order the indices of entries by key, one per key:
// the last one sent.
func keptOrder(order []int32, entries []typedEntry) []int32 {
	order = sortedOrder(order, entries)
	kept := order[:0] // written behind the reading: i+1 is still to read
	for i, at := range order {
		if i+1 == len(order) || entries[order[i+1]].key != entries[at].key {
			kept = append(kept, at)
		}
	}
	return kept
}

// sortedOrder appends to order the indices of entries by key, a repeated
// key's in the order sent.
func sortedOrder(order []int32, entries []typedEntry) []int32 {
	for i := range entries {
		order = append(order, int32(i))
	}
	if len(order) <= 16 {
		// by insertion, keys compared inline: an entry's dozen attributes
		// cost a third of what a sort calling a comparison function cost
		for i := 1; i < len(order); i++ {
			for j := i; j > 0 && entries[order[j]].key < entries[order[j-1]].key; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
		return order
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(entries[a].key, entries[b].key); c != 0 {
			return c
		}
		return int(a - b)
	})
	return order
}

// typedMember reads one attribute onto the scratch space: a typed value's
// object, or anything else as it is.
func (p *jsonParser) typedMember(key string) error {
	a := p.typed
	a.sent = append(a.sent, typedEntry{key: key})
	a.read1, a.readAt = a.read1+1, int32(len(a.sent)-1)
	// read in place: a value inside it reads no typed attributes, so
	// nothing appends to a.sent until it is read
	e := &a.sent[len(a.sent)-1]
	var err error
	if p.at('{') {
		if p.canonicalTypedValue(e) {
			return nil
		}
		err = p.typedValue(e)
	} else {
		e.x, err = p.value()
	}
	return err
}

// typedValue reads one typed value's object ({"type", "value"} or a
// legacy member) into e; its other members are read and left.
func (p *jsonParser) typedValue(e *typedEntry) error {
	e.isObject = true
	if empty, err := p.openObject(); empty || err != nil {
		return err
	}
	// objectWith's loop without its stack: every attribute of a
	// container is one of these
	for {
		key, err := p.memberKey()
		if err != nil {
			return err
		}
		if err := p.typedValueMember(e, key); err != nil {
			return err
		}
		if end, err := p.next('}', "after an object value"); end || err != nil {
			p.depth--
			return err
		}
	}
}

// Two shapes of a typed value as SDKs write it, compact: the JavaScript
// and Python SDKs write "value" first, others "type".
const (
	valueFirst     = `{"value":`
	typeAfterValue = `,"type":"`
	typeFirst      = `{"type":"`
	valueAfterType = `","value":`
)

// canonicalTypedValue reads a typed value written compactly as SDKs write
// it, {"value":V,"type":"T"} or {"type":"T","value":V} with V a string
// without escapes or a number, by comparing its bytes to the shape rather
// than reading it member by member (half of what reading a container's
// attribute cost). Anything else leaves pos and e as they were and is
// false: typedValue reads it.
func (p *jsonParser) canonicalTypedValue(e *typedEntry) bool {
	if p.depth >= maxNesting {
		return false
	}
	start := p.pos
	var ok bool
	if p.skipText(valueFirst) {
		ok = p.canonicalText(e) && p.skipText(typeAfterValue) && p.canonicalType(e) && p.skipText(`"}`)
	} else if p.skipText(typeFirst) {
		ok = p.canonicalType(e) && p.skipText(valueAfterType) && p.canonicalText(e) && p.skipText(`}`)
	}
	if !ok {
		p.pos = start
		*e = typedEntry{key: e.key}
		return false
	}
	e.isObject = true
	return true
}

// skipText skips text when the input continues with it.
func (p *jsonParser) skipText(text string) bool {
	if len(p.data)-p.pos < len(text) || string(p.data[p.pos:p.pos+len(text)]) != text {
		return false
	}
	p.pos += len(text)
	return true
}

// canonicalText reads a typed value's "value" when it is a string without
// escapes or a number.
func (p *jsonParser) canonicalText(e *typedEntry) bool {
	if p.pos >= len(p.data) {
		return false
	}
	if p.data[p.pos] == '"' {
		// the value the entry of the same shape before had here, when the
		// payload has its very text (most attributes of a container are
		// the same in every entry: release, environment, SDK, server)
		if sh, i := p.typed.recall, len(p.typed.sent)-1; sh != nil && sh.members[i].plain && p.skipQuoted(sh.members[i].text) {
			e.text, e.textKind, e.plainString = sh.members[i].text, stringText, true
			return true
		}
		b, ok := p.plain()
		e.text, e.textKind, e.plainString = p.shared(b), stringText, ok
		return ok
	}
	if !isNumberStart(p.data[p.pos]) {
		return false
	}
	b, err := p.numberBytes()
	e.text, e.textKind = string(b), numberText
	return err == nil
}

// canonicalType reads a typed value's "type" after its opening quote, up
// to and past its closing quote.
func (p *jsonParser) canonicalType(e *typedEntry) bool {
	p.pos-- // plain starts at the quote
	b, ok := p.plain()
	if !ok {
		return false
	}
	if k, known := knownKeys.find(b); known {
		e.typ = k
	} else {
		e.typ = p.shared(b)
	}
	p.pos-- // the closing quote is the shape's
	return true
}

// typedValueMember reads member key of a typed value into e: "type" when a
// string is one of Sentry's type names (shared rather than allocated), a
// string or number "value" as its text (no boxed copy), the rest as
// values.
func (p *jsonParser) typedValueMember(e *typedEntry, key string) error {
	switch {
	case key == "type" && p.at('"'):
		s, err := p.key()
		e.typ = s
		return err
	case key == "value" && p.atText():
		return p.valueText(e)
	}
	v, err := p.value()
	e.setMember(key, v)
	return err
}

// atText says whether a string or a number is next.
func (p *jsonParser) atText() bool {
	p.skipSpace()
	return p.pos < len(p.data) && (p.data[p.pos] == '"' || isNumberStart(p.data[p.pos]))
}

// valueText reads a typed value's string or number "value" as its text.
func (p *jsonParser) valueText(e *typedEntry) error {
	var err error
	e.x, e.textKind = nil, numberText
	if p.data[p.pos] == '"' {
		e.textKind = stringText
		e.text, err = p.str()
		return err
	}
	e.text, err = p.numberText()
	return err
}

// setMember sets a typed value's member key that is not a string "type"
// nor a string or number "value".
func (e *typedEntry) setMember(key string, v any) {
	switch key {
	case "type":
		e.typ = "" // not a string: no type
	case "value":
		e.x, e.text, e.textKind = v, "", noText
	default:
		for i, lt := range legacyTypes {
			if key == lt.member {
				e.setLegacy(i, v)
			}
		}
	}
}

// setLegacy sets legacy member i; the array is made for the first one.
func (e *typedEntry) setLegacy(i int, v any) {
	if e.legacy == nil {
		e.legacy = new([len(legacyTypes)]any)
	}
	e.legacy[i] = v
}

// Entry is an object entry of a container: its members in the order sent,
// read with Get as a decoded object's (a repeated member: the last one).
// A list rather than a map: a translator looks up a handful of members,
// and an entry's map cost a tenth of a log container's translation.
type Entry struct {
	members []entryMember
	p       *jsonParser
}

// entryMember is one member of an Entry: its value, or for a string
// without escapes and for a number its text's place in the payload (a
// value made of them cost a look-up in the shared strings and a box).
type entryMember struct {
	key        string
	value      any
	text       textKind
	start, end int
}

// find is the last member called key; nil when there is none.
func (e *Entry) find(key string) *entryMember {
	if i := e.index(key); i >= 0 {
		return &e.members[i]
	}
	return nil
}

// index is the index of the last member called key; -1 when there is none.
func (e *Entry) index(key string) int {
	for i := len(e.members) - 1; i >= 0; i-- {
		if e.members[i].key == key {
			return i
		}
	}
	return -1
}

// Len is the number of members sent, a repeated key counted each time: a
// translator that maps many members reads them by index in one pass
// (Key, StringAt, NumberAt, ...), the last of a key winning as with Get,
// rather than looking each one up by its key.
func (e *Entry) Len() int { return len(e.members) }

// Key is the key of member i, in the order sent.
func (e *Entry) Key(i int) string { return e.members[i].key }

// At is member i's value, as Get gives it.
func (e *Entry) At(i int) any { return e.valueOf(&e.members[i]) }

// StringAt is member i when it is a string, as String gives it.
func (e *Entry) StringAt(i int) (string, bool) {
	m := &e.members[i]
	if m.text == stringText {
		return e.p.shared(e.bytes(m)), true
	}
	s, ok := m.value.(string)
	return s, ok
}

// NumberAt is the text of member i when it is a number: the payload's own
// bytes, valid only during the visitor's call, so that reading it makes
// no value.
func (e *Entry) NumberAt(i int) ([]byte, bool) {
	m := &e.members[i]
	if m.text != numberText {
		return nil, false
	}
	return e.bytes(m), true
}

// TimestampAt reads member i as Timestamp does.
func (e *Entry) TimestampAt(i int) (pcommon.Timestamp, error) {
	if m := &e.members[i]; m.text == numberText {
		// Scan reads the shape SDKs write by words, from the payload, which
		// goes on past the number (the number's own text is too short)
		if t, end, ok := sentrytime.Scan(e.p.data, m.start); ok && end == m.end {
			return afterEpoch(t)
		}
		return timestampOfSeconds(e.bytes(m))
	}
	return TimestampOf(e.At(i))
}

// bytes is the text of a member kept as its place in the payload.
func (e *Entry) bytes(m *entryMember) []byte { return e.p.data[m.start:m.end] }

// valueOf is a member's value as DecodeAny decodes it.
func (e *Entry) valueOf(m *entryMember) any {
	switch m.text {
	case stringText:
		return e.p.sharedValue(e.bytes(m))
	case numberText:
		return e.p.shareBoxed(&e.p.nums, e.bytes(m), func(s string) any { return json.Number(s) })
	}
	return m.value
}

// Get is the value of member key: the last one sent, as DecodeAny decodes
// it; nil when absent.
func (e *Entry) Get(key string) any {
	if m := e.find(key); m != nil {
		return e.valueOf(m)
	}
	return nil
}

// String is member key when it is a string.
func (e *Entry) String(key string) (string, bool) {
	if i := e.index(key); i >= 0 {
		return e.StringAt(i)
	}
	return "", false
}

// Str is member key when it is a string, else "".
func (e *Entry) Str(key string) string {
	s, _ := e.String(key)
	return s
}

// Int is member key when it is an integer number (see Int).
func (e *Entry) Int(key string) (int64, bool) {
	m := e.find(key)
	if m == nil || m.text != numberText {
		return 0, false
	}
	if i, ok := intOfBytes(e.bytes(m)); ok {
		return i, true
	}
	return intOfNumber(json.Number(e.bytes(m)))
}

// Timestamp reads member key as TimestampOf reads a decoded value.
func (e *Entry) Timestamp(key string) (pcommon.Timestamp, error) {
	if i := e.index(key); i >= 0 {
		return e.TimestampAt(i)
	}
	return TimestampOf(nil)
}

// Others are the members that are not null and that mapped does not
// claim, one per key (the last sent), in key order: what a translator
// keeps as sentry.payload.<member>. The cost is the sort of those members.
func (e *Entry) Others(mapped func(key string) bool) []Member {
	var others []Member
	for i := range e.members {
		if m := &e.members[i]; !mapped(m.key) {
			others = append(others, Member{Key: m.key, Value: e.valueOf(m)})
		}
	}
	if len(others) == 0 {
		return nil
	}
	// stable: of a repeated key, the last one sent is last
	slices.SortStableFunc(others, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
	kept := others[:0] // written behind the reading
	for i, m := range others {
		if (i+1 == len(others) || others[i+1].Key != m.Key) && m.Value != nil {
			kept = append(kept, m)
		}
	}
	return kept
}

// Member is one member of an Entry.
type Member struct {
	Key   string
	Value any
}

// reset empties the entry, keeping no values alive.
func (e *Entry) reset() {
	clear(e.members[:cap(e.members)])
	e.members = e.members[:0]
}

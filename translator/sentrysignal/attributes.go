package sentrysignal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
)

// Sentry's attribute type names.
const (
	TypeString  = "string"
	TypeBoolean = "boolean"
	TypeInteger = "integer"
	TypeDouble  = "double"
	TypeArray   = "array"
)

// ErrNotObject says a container entry's "attributes" is not an object.
var ErrNotObject = errors.New("not an object")

// PutEntryAttributes writes a container entry's "attributes" as
// ScanContainer gives them, a *TypedAttributes; anything else is
// ErrNotObject. Without Options.IncludeUserData it leaves out the
// attributes that identify a person (see PersonalAttribute), which SDKs
// add to logs and metrics when their sendDefaultPii is on. Past
// MaxMapEntries attributes in m the rest (in key order) are dropped and
// counted, but still checked: an attribute that is not of its type fails
// wherever it is. When res is not nil, the attributes that name the
// program (see NoteResourceAttribute) that are written as strings are
// noted in it.
func (l *Limiter) PutEntryAttributes(m pcommon.Map, attrs any, res *sentryresource.Resource) error {
	if t, ok := attrs.(*TypedAttributes); ok {
		return l.putTypedEntries(m, t, res, -1)
	}
	return ErrNotObject
}

// PutEntryAttributesAside is PutEntryAttributes, but the attribute called
// asideKey goes to aside rather than to m: a metric's
// sentry.timestamp.sequence, an attribute of its one observation, goes to
// its exemplar without being put into m and found and removed again.
func (l *Limiter) PutEntryAttributesAside(m pcommon.Map, attrs any, res *sentryresource.Resource, asideKey string, aside pcommon.Map) error {
	t, ok := attrs.(*TypedAttributes)
	if !ok {
		return ErrNotObject
	}
	at := t.kept(asideKey)
	if at >= 0 && l.leftOut(asideKey) {
		at = -1
	}
	if !l.putWritten(m, t, res, at) {
		dropped := l.dropped
		if err := l.putTypedEntries(m, t, res, at); err != nil {
			return err
		}
		t.unchanged = l.dropped == dropped
	}
	if at >= 0 {
		var tmp typedEntry
		return l.putTypedEntry(aside, t.entry(at, &tmp), res)
	}
	return nil
}

// putWritten writes the attributes (but the one at skip) into the empty m
// as a copy of what was written for the entry before of their shape, when
// each one is the very text that entry sent (and so is read as it was:
// the release, environment, SDK, server and user a container's entries
// share) and the translator told where it wrote that entry's (Wrote): the
// copy costs no look-up of a key, no limit and no check of a value. The
// attributes that name the program are noted in res as writing notes them.
// False, writing nothing, when the attributes cannot be written so.
func (l *Limiter) putWritten(m pcommon.Map, a *TypedAttributes, res *sentryresource.Resource, skip int32) bool {
	sh := a.recall
	if sh == nil || a.recallAt != 0 || a.before == 0 || sh.writtenOf != a.before || m.Len() != 0 {
		return false
	}
	if a.read1 > 1 || a.read1 == 1 && a.readAt != skip {
		return false // an attribute that is not its shape's last entry's
	}
	sh.written.CopyTo(m)
	a.unchanged = true
	if res != nil {
		l.noteWritten(res, a, skip)
	}
	return true
}

// noteWritten notes in res what putTypedEntry notes of the attributes
// (but the one at skip) when it writes them: those read as text whose
// type writes them as strings.
func (l *Limiter) noteWritten(res *sentryresource.Resource, a *TypedAttributes, skip int32) {
	var tmp typedEntry
	for _, i := range a.order {
		e := a.entry(i, &tmp)
		if i == skip || l.leftOut(e.key) || e.textKind != stringText {
			continue
		}
		switch e.typ {
		case TypeInteger, TypeDouble, TypeBoolean:
		default:
			NoteResourceAttribute(res, e.key, e.text)
		}
	}
}

// Wrote tells that the attributes written by PutEntryAttributesAside are
// now m, where nothing else was written and which is not to change, so
// that an entry of the same attributes after them is written as a copy of
// m. Only a container's scan gives attributes it helps.
func (a *TypedAttributes) Wrote(m pcommon.Map) {
	if sh := a.recall; sh != nil && a.recallAt == 0 && sh.last == a.read && a.unchanged {
		sh.written, sh.writtenOf = m, a.read
	}
}

// kept is the index in a.sent of the attribute called key that is kept
// (the last one sent); -1 when there is none.
func (a *TypedAttributes) kept(key string) int32 {
	for _, i := range a.order {
		if a.keyOf(i) == key {
			return i
		}
	}
	return -1
}

// leftOut says whether the attribute key is left out: personal data
// (see PersonalAttribute) without Options.IncludeUserData.
func (l *Limiter) leftOut(key string) bool {
	return !l.opts.IncludeUserData && PersonalAttribute(key)
}

// written counts the attributes that are not left out.
func (l *Limiter) written(a *TypedAttributes) int {
	n := 0
	for _, i := range a.order {
		if !l.leftOut(a.keyOf(i)) {
			n++
		}
	}
	return n
}

// putTypedEntries is PutTyped of attributes sorted by key, one per key,
// noting the program's attributes in res when it is not nil. Personal
// ones are skipped in place rather than copied out (a copy per metric
// was a third of the bytes a metric container's translation allocated).
// All but the attribute at skip (an index in a.sent; -1 for none), which
// the caller puts elsewhere.
func (l *Limiter) putTypedEntries(m pcommon.Map, a *TypedAttributes, res *sentryresource.Resource, skip int32) error {
	n := l.written(a)
	if m.Len() == 0 && n >= minBulkKeys {
		return l.putTypedBulk(m, a, n, res, skip)
	}
	m.EnsureCapacity(m.Len() + min(n, l.opts.MaxMapEntries))
	var tmp typedEntry
	for _, i := range a.order {
		if i == skip || l.leftOut(a.keyOf(i)) {
			continue
		}
		if err := l.putTypedEntry(m, a.entry(i, &tmp), res); err != nil {
			return err
		}
	}
	return nil
}

// putTypedEntry puts one attribute; a null one is left out.
func (l *Limiter) putTypedEntry(m pcommon.Map, e *typedEntry, res *sentryresource.Resource) error {
	if e.isStringText() {
		// what read, setTyped and note do of it, without their copies
		if v, kept := l.Put(m, e.key); kept {
			v.SetStr(e.text)
			if res != nil {
				NoteResourceAttribute(res, e.key, e.text)
			}
		}
		return nil
	}
	val, ok, err := e.read()
	if err != nil {
		return fmt.Errorf("%s: %w", e.key, err)
	}
	if !ok {
		return nil
	}
	if v, kept := l.Put(m, e.key); kept {
		l.setTyped(v, val)
		val.note(res, e.key)
	}
	return nil
}

// putTypedBulk is PutTyped of many attributes into an empty map, in time
// linear in their number (see Entries). Every attribute is checked before
// any is put.
func (l *Limiter) putTypedBulk(m pcommon.Map, a *TypedAttributes, n int, res *sentryresource.Resource, skip int32) error {
	vals := make([]typedValue, 0, n)
	present := make([]string, 0, n)
	var tmp typedEntry
	for _, i := range a.order {
		e := a.entry(i, &tmp)
		if i == skip || l.leftOut(e.key) {
			continue
		}
		val, ok, err := e.read()
		if err != nil {
			return fmt.Errorf("%s: %w", e.key, err)
		}
		if ok {
			vals, present = append(vals, val), append(present, e.key)
		}
	}
	values, kept := l.Entries(m, present)
	for i, val := range vals {
		if kept[i] {
			l.setTyped(values[i], val)
			val.note(res, present[i])
		}
	}
	return nil
}

// note notes the attribute key of value v in res when it names the
// program and setTyped wrote it as a string.
func (v *typedValue) note(res *sentryresource.Resource, key string) {
	if res == nil {
		return
	}
	switch v.typ {
	case TypeString:
		NoteResourceAttribute(res, key, v.s)
	case TypeInteger, TypeDouble, TypeBoolean:
	default: // written by SetAny: a string stays one
		if s, ok := v.x.(string); ok {
			NoteResourceAttribute(res, key, s)
		}
	}
}

// legacyTypes are the members of the first log SDKs' typed values.
var legacyTypes = [...]struct{ member, typ string }{
	{"string_value", TypeString}, {"int_value", TypeInteger}, {"double_value", TypeDouble}, {"bool_value", TypeBoolean},
}

// TypedAttributes is the "attributes" object of a container entry as
// Container decodes it: the typed values read straight into their
// members, not into a map each (an attribute cost two maps, most of a log
// container's decoding).
type TypedAttributes struct {
	// sent are the attributes in the order sent; order indexes them
	// sorted by key, one per key: the last one sent. The attributes stay
	// where they were read (moving them, with their strings, cost the
	// garbage collector's write barriers a tenth of a log container's
	// translation).
	sent  []typedEntry
	order []int32
	// shapes remembers the last few shapes of entries' attributes; recall
	// is the one the entry being read has matched so far, key by key, by
	// their text in the payload: an entry of a remembered shape finds its
	// keys, the string values and the whole attributes the one before had
	// by comparing bytes, and is not sorted again (see keptOrderOf). nil
	// once a key differs from every remembered shape's.
	shapes [4]shape
	recall *shape
	// oldest is the shape the next new one replaces
	oldest int
	// objectAt is where the attributes being read start, after their "{"
	objectAt int
	// unchanged says the attributes last written were all written (none
	// dropped at the limit).
	unchanged bool
	// virtual is the number of first attributes recalled as virtualOf's
	// last entry's, which a.sent holds no copy of: writing each one's
	// strings cost the garbage collector's write barriers most of what
	// recalling them saved (see entry).
	virtual   int
	virtualOf *shape
	// read1 counts the attributes read one by one, not recalled as the
	// very text of their shape's last entry; readAt is the last of them.
	read1  int
	readAt int32
	// read numbers the attribute objects read (from 1); recallAt is the
	// attribute from which recall was recalled (0: all of them), and
	// before the entry its shape had before this one (0: none), whose
	// written attributes may be written again (see putWritten).
	read, before uint64
	recallAt     int
}

// shape is the keys of an entry's attributes in the order sent, their
// kept order, and what the last entry of the shape sent under them.
type shape struct {
	keys    []string
	order   []int32
	members []recalled
	// object is the text of the last entry's attributes, from after the
	// object's "{" to the end of its last attribute, where each member's
	// at and end are
	object []byte
	// last is the number (TypedAttributes.read) of the last entry of the
	// shape; written is the map a translator wrote that entry's attributes
	// into, when it told (see Wrote): of entry writtenOf, a map no other
	// member wrote into and in which no attribute was dropped.
	last, writtenOf uint64
	written         pcommon.Map
}

// recalled is what the last entry of a shape sent under one of its keys:
// the attribute's text in the payload, and what was read of it. An
// attribute whose text is the same is the same attribute.
type recalled struct {
	raw  []byte
	text string
	typ  string
	kind textKind
	// plain says text is a string written without escapes, which can be
	// recognised by its text alone; whole says the attribute is a typed
	// value whose reading is all in text, typ and kind.
	plain, whole bool
	// at and end are the attribute's place in the shape's object
	at, end int
}

// Len is the number of attributes.
func (a *TypedAttributes) Len() int { return len(a.order) }

// entry is attribute i as read: a.sent[i], or for one of the first
// a.virtual, which are not written there (see sameAttributes), the same
// built into tmp.
func (a *TypedAttributes) entry(i int32, tmp *typedEntry) *typedEntry {
	if int(i) >= a.virtual {
		return &a.sent[i]
	}
	*tmp = a.virtualOf.recalledEntry(int(i), a.objectAt)
	return tmp
}

// keyOf is the key of attribute i (see entry).
func (a *TypedAttributes) keyOf(i int32) string {
	if int(i) < a.virtual {
		return a.virtualOf.keys[i]
	}
	return a.sent[i].key
}

// materialize writes the first a.virtual attributes into a.sent.
func (a *TypedAttributes) materialize() {
	for i := range a.virtual {
		a.sent[i] = a.virtualOf.recalledEntry(i, a.objectAt)
	}
	a.virtual, a.virtualOf = 0, nil
}

// recalledEntry is the attribute the shape's member i is, read at its
// place in an object at objectAt that has the shape's very text there.
func (sh *shape) recalledEntry(i, objectAt int) typedEntry {
	m := &sh.members[i]
	return typedEntry{key: sh.keys[i], isObject: true, textKind: m.kind, typ: m.typ, text: m.text, plainString: m.plain, same: true,
		start: objectAt + m.at, end: objectAt + m.end}
}

// typedEntry is one typed attribute: the attribute itself in x when it is
// not an object (or when it came from a map), else the members a typed
// value is read from.
type typedEntry struct {
	key      string
	isObject bool
	textKind textKind
	// plainString says text is a string the payload has without escapes
	plainString bool
	// start and end are the attribute's place in the payload, its key
	// and its value; same says it is the attribute its shape recalled
	start, end int
	same       bool
	typ        string // "type" when it is a string
	// x is the attribute, or its object's "value" unless that is a
	// string or a number: text, which saves each a boxed copy (most
	// attributes are strings)
	x    any
	text string
	// legacy holds the legacy members (by legacyTypes' index); nil when
	// there are none, as with every SDK of today.
	legacy *[len(legacyTypes)]any
}

// textKind says what a typed value's text is.
type textKind uint8

const (
	noText textKind = iota
	stringText
	numberText
)

// isStringText says e is a string attribute read as its text, as SDKs send
// nearly every attribute: {"value": "…", "type": "string"}.
func (e *typedEntry) isStringText() bool {
	return e.isObject && e.textKind == stringText && e.legacy == nil && e.typ == TypeString
}

// read reads the attribute as readTypedAttribute reads its object.
func (e *typedEntry) read() (typedValue, bool, error) {
	if !e.isObject {
		return readTypedAttribute(e.x)
	}
	if e.textKind != noText && e.legacy == nil {
		return readTypedText(e.typ, e.text, e.textKind)
	}
	var none [len(legacyTypes)]any
	legacy := e.legacy
	if legacy == nil {
		legacy = &none
	}
	x := e.x
	switch e.textKind {
	case stringText:
		x = e.text
	case numberText:
		x = json.Number(e.text)
	}
	return readTypedFields(e.typ, x, legacy)
}

// readTypedAttribute reads one typed attribute; ok is false for one
// whose value is null, which is left out.
func readTypedAttribute(attr any) (val typedValue, ok bool, err error) {
	tv, isObj := attr.(map[string]any)
	if !isObj {
		if attr == nil {
			return typedValue{}, false, nil
		}
		return typedValue{}, false, fmt.Errorf("a typed attribute cannot be a %T", attr)
	}
	var legacy [len(legacyTypes)]any
	for i, lt := range legacyTypes {
		legacy[i] = tv[lt.member]
	}
	return readTypedFields(Str(tv, "type"), tv["value"], &legacy)
}

// readTypedFields reads a typed value from its "type", "value" and the
// legacy members (by legacyTypes' index; null or absent is nil): a legacy
// member overrides the pair, the last one in legacyTypes' order winning.
func readTypedFields(typ string, x any, legacy *[len(legacyTypes)]any) (val typedValue, ok bool, err error) {
	for i, lt := range legacyTypes {
		if v := legacy[i]; v != nil {
			typ, x = lt.typ, v
		}
	}
	if x == nil {
		return typedValue{}, false, nil
	}
	val, err = readTyped(typ, x)
	return val, err == nil, err
}

// readTypedText is readTyped of a string or number value given as its
// text, without boxing it where the type has a setter.
func readTypedText(typ, text string, kind textKind) (val typedValue, ok bool, err error) {
	val.typ = typ
	switch typ {
	case TypeString:
		val.s = text // asString gives a string or a number's text as it is
	case TypeInteger:
		val.i, err = intOfText(text)
	case TypeDouble:
		val.f, err = strconv.ParseFloat(text, 64)
	default: // booleans and the types without a setter take the value itself
		var x any = text
		if kind == numberText {
			x = json.Number(text)
		}
		val, err = readTyped(typ, x)
	}
	return val, err == nil, err
}

// setTyped writes a typed attribute's value.
func (l *Limiter) setTyped(v pcommon.Value, val typedValue) {
	switch val.typ {
	case TypeInteger:
		v.SetInt(val.i)
	case TypeDouble:
		v.SetDouble(val.f)
	case TypeString:
		v.SetStr(val.s)
	case TypeBoolean:
		v.SetBool(val.b)
	default: // arrays and types this version does not know
		l.SetAny(v, val.x, l.opts.MaxDepth)
	}
}

// typedValue is one typed attribute's value, read and checked.
type typedValue struct {
	typ string
	x   any // the value as decoded, for the types without a setter
	i   int64
	f   float64
	s   string
	b   bool
}

// readTyped reads x as Sentry's type typ; other types are free-form JSON.
func readTyped(typ string, x any) (typedValue, error) {
	tv := typedValue{typ: typ, x: x}
	var err error
	switch typ {
	case TypeInteger:
		tv.i, err = asInt(x)
	case TypeDouble:
		tv.f, err = asFloat(x)
	case TypeString:
		tv.s, err = asString(x)
	case TypeBoolean:
		tv.b, err = asBool(x)
	}
	return tv, err
}

func asInt(x any) (int64, error) {
	var text string
	switch t := x.(type) {
	case json.Number:
		text = string(t)
	case string:
		text = t
	default:
		return 0, fmt.Errorf("integer attribute holds %T", x)
	}
	return intOfText(text)
}

// intOfText reads an integer, also written as a float with no fraction.
func intOfText(text string) (int64, error) {
	if i, ok := intOf(text); ok {
		return i, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != float64(int64(f)) {
		return 0, fmt.Errorf("not an integer: %.40s", text)
	}
	return int64(f), nil
}

func asString(x any) (string, error) {
	switch x.(type) {
	case string, json.Number, bool:
		return Text(map[string]any{"": x}, ""), nil
	}
	return "", fmt.Errorf("string attribute holds %T", x)
}

func asBool(x any) (bool, error) {
	switch t := x.(type) {
	case bool:
		return t, nil
	case string:
		return strconv.ParseBool(t)
	}
	return false, fmt.Errorf("boolean attribute holds %T", x)
}

func asFloat(x any) (float64, error) {
	switch t := x.(type) {
	case json.Number:
		return strconv.ParseFloat(string(t), 64)
	case string:
		return strconv.ParseFloat(t, 64)
	}
	return 0, fmt.Errorf("double attribute holds %T", x)
}

// PersonalAttribute reports whether an attribute key names personal data:
// user.* (id, email, name, full_name, …) and client.address.
func PersonalAttribute(key string) bool {
	return strings.HasPrefix(key, "user.") || key == "client.address"
}

package sentrysignal

import (
	"bytes"
	"encoding/json"
	"errors"
	"iter"
	"strconv"
	"sync"
)

// Payload is one JSON payload read once into a flat list of its values
// (a tape: each value is a node, followed by the nodes of what it holds),
// for translators that write a payload's members straight into pdata.
// DecodeAny builds a map[string]any tree instead, which a writer then
// walks again: for an error event the tree's maps and boxes were half of
// its translation. A Payload accepts and refuses exactly the inputs
// DecodeAny does, and Any gives the values DecodeAny gives.
//
// A Payload is not safe for concurrent use; Release gives its space to
// the next one.
type Payload struct {
	data []byte
	// text is data as one string, which the strings written are slices
	// of: one copy of the payload rather than an allocation and a copy
	// per string (the copies were a fifth of an error event's
	// translation). A record kept holds the payload's text alive, which
	// is at most the size of what it was written from.
	text string
	// nodes hold no pointer, so that the tape costs the collector
	// nothing to scan and its appends no write barrier; the strings that
	// had escapes, unquoted, are in unquoted.
	nodes    []node
	unquoted []string
}

// Node is a value of a Payload: its index on the tape, or NoNode.
type Node int32

// NoNode is an absent value: a member an object does not have, an
// element of something that is not an array.
const NoNode Node = -1

// Kind is the JSON type of a node.
type Kind uint8

// The kinds of node; KindNone is NoNode's.
const (
	KindNone Kind = iota
	KindNull
	KindFalse
	KindTrue
	KindNumber
	KindString
	KindArray
	KindObject
)

// node is one value on the tape. An object's node is followed by its
// members, each a KindString node for the key and the value's nodes; an
// array's by its elements' nodes.
type node struct {
	kind Kind
	// raw says a string's text is data[start:stop] as it is (no escapes,
	// valid UTF-8), a slice of Payload.text; else it is
	// Payload.unquoted[start]. A number's text is data[start:stop].
	raw bool
	// end is the index after the last node of this value.
	end         int32
	start, stop int32
}

var payloads = sync.Pool{New: func() any { return new(Payload) }}

// ReadObject reads a payload that must be one JSON object, as
// DecodeObject does (the same limits, the same errors naming item).
func ReadObject(item string, payload []byte, opts Options) (*Payload, error) {
	if err := opts.CheckSize(item, payload); err != nil {
		return nil, err
	}
	p, err := readPayload(payload)
	if err != nil {
		return nil, PayloadError(item, "", "not JSON", err)
	}
	if p.Kind(p.Root()) != KindObject {
		p.Release()
		return nil, PayloadError(item, "", "not a JSON object", nil)
	}
	return p, nil
}

// readPayload reads one JSON value and refuses trailing data, as
// DecodeAny does.
func readPayload(data []byte) (*Payload, error) {
	p := payloads.Get().(*Payload)
	p.data, p.text = data, string(data)
	jp := newParser(data)
	defer jp.release()
	err := jp.tapeValue(p)
	if err == nil && len(bytes.TrimSpace(data[jp.pos:])) != 0 {
		err = errors.New("trailing data after the JSON value")
	}
	if err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// Release empties p for the next payload; nothing of p may be used after.
// A tape grown past maxPooledScratch by a large payload is let go.
func (p *Payload) Release() {
	clear(p.unquoted) // the pool keeps no strings alive
	*p = Payload{nodes: pooled(p.nodes), unquoted: pooled(p.unquoted)}
	payloads.Put(p)
}

// tapeValue appends the value at pos and everything in it to nodes.
func (p *jsonParser) tapeValue(t *Payload) error {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return p.syntaxError("looking for a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.tapeContainer(t, KindObject, p.tapeMembers)
	case c == '[':
		return p.tapeContainer(t, KindArray, p.tapeElements)
	case c == '"':
		return p.tapeString(t)
	case isNumberStart(c):
		start := p.pos
		_, err := p.numberBytes()
		t.nodes = append(t.nodes, node{kind: KindNumber, start: int32(start), stop: int32(p.pos)})
		return err
	}
	return p.tapeLiteral(t)
}

// tapeString appends the string at pos (its opening quote): where it has
// no escapes, as where it is in the payload.
func (p *jsonParser) tapeString(t *Payload) error {
	start := int32(p.pos + 1)
	if b, ok := p.plain(); ok {
		t.nodes = append(t.nodes, node{kind: KindString, raw: true, start: start, stop: start + int32(len(b))})
		return nil
	}
	s, err := p.unquote(p.pos)
	t.nodes = append(t.nodes, node{kind: KindString, start: int32(len(t.unquoted))})
	t.unquoted = append(t.unquoted, s)
	return err
}

// tapeLiteral appends true, false or null.
func (p *jsonParser) tapeLiteral(t *Payload) error {
	x, err := p.literalValue()
	kind := KindNull
	if b, ok := x.(bool); ok {
		kind = KindFalse
		if b {
			kind = KindTrue
		}
	}
	t.nodes = append(t.nodes, node{kind: kind})
	return err
}

// tapeContainer appends an object or an array, its contents read by
// contents, and notes where it ends.
func (p *jsonParser) tapeContainer(t *Payload, kind Kind, contents func(*Payload) error) error {
	if err := p.enter(); err != nil {
		return err
	}
	p.pos++ // '{' or '['
	at := len(t.nodes)
	t.nodes = append(t.nodes, node{kind: kind})
	if err := contents(t); err != nil {
		return err
	}
	p.depth--
	t.nodes[at].end = int32(len(t.nodes))
	return nil
}

// tapeMembers appends an object's members, up to and past its "}".
func (p *jsonParser) tapeMembers(t *Payload) error {
	if p.at('}') {
		p.pos++
		return nil
	}
	for {
		if err := p.tapeKey(t); err != nil {
			return err
		}
		if err := p.tapeValue(t); err != nil {
			return err
		}
		if end, err := p.next('}', "after an object value"); end || err != nil {
			return err
		}
	}
}

// tapeKey appends a member's key and reads the ":" after it.
func (p *jsonParser) tapeKey(t *Payload) error {
	if !p.at('"') {
		return p.syntaxError("looking for an object key")
	}
	if err := p.tapeString(t); err != nil {
		return err
	}
	if !p.at(':') {
		return p.syntaxError("after an object key")
	}
	p.pos++
	return nil
}

// tapeElements appends an array's elements, up to and past its "]".
func (p *jsonParser) tapeElements(t *Payload) error {
	if p.at(']') {
		p.pos++
		return nil
	}
	for {
		if err := p.tapeValue(t); err != nil {
			return err
		}
		if end, err := p.next(']', "after an array element"); end || err != nil {
			return err
		}
	}
}

// Root is the payload's value.
func (p *Payload) Root() Node { return 0 }

// Kind is n's JSON type; KindNone for NoNode.
func (p *Payload) Kind(n Node) Kind {
	if n < 0 {
		return KindNone
	}
	return p.nodes[n].kind
}

// after is the node after n and everything in it.
func (p *Payload) after(n Node) Node {
	if k := p.nodes[n].kind; k == KindObject || k == KindArray {
		return Node(p.nodes[n].end)
	}
	return n + 1
}

// Members are obj's members in the order sent, a repeated key as often
// as it was sent; none when obj is not an object.
func (p *Payload) Members(obj Node) iter.Seq2[string, Node] {
	return func(yield func(string, Node) bool) {
		if p.Kind(obj) != KindObject {
			return
		}
		for k := obj + 1; k < Node(p.nodes[obj].end); k = p.after(k + 1) {
			if !yield(p.str(k), k+1) {
				return
			}
		}
	}
}

// Elements are arr's elements; none when arr is not an array.
func (p *Payload) Elements(arr Node) iter.Seq[Node] {
	return func(yield func(Node) bool) {
		if p.Kind(arr) != KindArray {
			return
		}
		for e := arr + 1; e < Node(p.nodes[arr].end); e = p.after(e) {
			if !yield(e) {
				return
			}
		}
	}
}

// Member is obj's member key (the last one sent, as in DecodeAny's map);
// NoNode when obj is not an object, has no such member or has it null.
func (p *Payload) Member(obj Node, key string) Node {
	found := NoNode
	for k, v := range p.Members(obj) {
		if k == key {
			found = v
		}
	}
	if p.Kind(found) == KindNull {
		return NoNode
	}
	return found
}

// Str is n's text when it is a string (Str of a decoded object's member).
func (p *Payload) Str(n Node) string {
	if p.Kind(n) != KindString {
		return ""
	}
	return p.str(n)
}

// str is a string node's text.
func (p *Payload) str(n Node) string {
	if nd := &p.nodes[n]; nd.raw {
		return p.text[nd.start:nd.stop]
	}
	return p.unquoted[p.nodes[n].start]
}

// strBytes is a string node's text, not copied where it is raw.
func (p *Payload) strBytes(n Node) []byte {
	if nd := &p.nodes[n]; nd.raw {
		return p.data[nd.start:nd.stop]
	}
	return []byte(p.unquoted[p.nodes[n].start])
}

// Text is n as Text reads a decoded member: strings as they are, numbers
// and booleans as JSON writes them.
func (p *Payload) Text(n Node) string {
	switch p.Kind(n) {
	case KindString:
		return p.str(n)
	case KindNumber:
		return p.numberText(n)
	case KindTrue:
		return "true"
	case KindFalse:
		return "false"
	}
	return ""
}

// Bool is n when it is a boolean.
func (p *Payload) Bool(n Node) (value, ok bool) {
	switch p.Kind(n) {
	case KindTrue:
		return true, true
	case KindFalse:
		return false, true
	}
	return false, false
}

// Int is n when it is an integer number, as Int reads a decoded member.
func (p *Payload) Int(n Node) (int64, bool) {
	if p.Kind(n) != KindNumber {
		return 0, false
	}
	if i, ok := intOfBytes(p.numberBytes(n)); ok {
		return i, true
	}
	f, err := strconv.ParseFloat(p.numberText(n), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// Values is a Sentry list interface's entries (see Values): n when it is
// an array, else its "values" when that is one.
func (p *Payload) Values(n Node) Node {
	switch p.Kind(n) {
	case KindArray:
		return n
	case KindObject:
		if v := p.Member(n, "values"); p.Kind(v) == KindArray {
			return v
		}
	}
	return NoNode
}

func (p *Payload) numberBytes(n Node) []byte {
	return p.data[p.nodes[n].start:p.nodes[n].stop]
}

func (p *Payload) numberText(n Node) string { return p.text[p.nodes[n].start:p.nodes[n].stop] }

// Any is n as DecodeAny decodes it (nil for NoNode), for the members a
// translator reads as values.
func (p *Payload) Any(n Node) any {
	switch p.Kind(n) {
	case KindString:
		return p.str(n)
	case KindNumber:
		return json.Number(p.numberText(n))
	case KindTrue:
		return true
	case KindFalse:
		return false
	case KindArray:
		out := []any{}
		for e := range p.Elements(n) {
			out = append(out, p.Any(e))
		}
		return out
	case KindObject:
		out := map[string]any{}
		for k, v := range p.Members(n) {
			out[k] = p.Any(v) // a repeated key: the last one wins
		}
		return out
	}
	return nil
}

// intOfBytes is intOf of a number's text, without making it a string.
func intOfBytes(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	// 18 digits always fit in an int64; longer ones take strconv's checks
	if len(digits) == 0 || len(digits) > 18 {
		return intOf(string(b))
	}
	var i int64
	for _, c := range digits {
		if !isDigit(c) {
			return 0, false
		}
		i = i*10 + int64(c-'0')
	}
	if neg {
		i = -i
	}
	return i, true
}

package sentrysignal

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Writing a Payload's values into pdata: the value written is the one
// SetAny writes of the value DecodeAny gives (a differential test and a
// fuzz target hold the two to that), without the tree in between.

// NodeMember is one member of an object of a Payload.
type NodeMember struct {
	Key   string
	Value Node
}

// SortedMembers are obj's members as a Go map of them holds them (one
// per key, the last one sent; none null), sorted by key.
func (p *Payload) SortedMembers(obj Node) []NodeMember {
	var members []NodeMember
	return p.sortedMembers(&members, obj, nil, false, false)
}

// PutNode is Put and SetNode.
func (l *Limiter) PutNode(m pcommon.Map, key string, p *Payload, n Node, depth int, omit *Omission) {
	if v, ok := l.Put(m, key); ok {
		l.setNode(v, p, n, depth, omit, false)
	}
}

// PutNodeValues is PutNode of {"values": n}: a list interface sent as a
// bare array, written in the form Sentry reads it in.
func (l *Limiter) PutNodeValues(m pcommon.Map, key string, p *Payload, n Node, depth int, omit *Omission) {
	v, ok := l.Put(m, key)
	if !ok {
		return
	}
	if depth <= 0 {
		b := append([]byte(`{"values":`), p.appendCompact(nil, n, omit, false, &l.nodeMembers)...)
		v.SetStr(string(append(b, '}')))
		return
	}
	values := v.SetEmptyMap()
	values.EnsureCapacity(1)
	if x, ok := l.Put(values, "values"); ok {
		l.setNode(x, p, n, depth-1, omit, false)
	}
}

// SetNode is SetAny of n (see PutNode); with omit, the members it names
// are left out as SetAnyOmitting leaves them out.
func (l *Limiter) SetNode(v pcommon.Value, p *Payload, n Node, depth int, omit *Omission) {
	l.setNode(v, p, n, depth, omit, false)
}

// setNode is setAny of a node.
func (l *Limiter) setNode(v pcommon.Value, p *Payload, n Node, depth int, omit *Omission, inList bool) {
	switch p.Kind(n) {
	case KindString:
		v.SetStr(p.str(n))
	case KindTrue, KindFalse:
		v.SetBool(p.Kind(n) == KindTrue)
	case KindNumber:
		p.setNumber(v, n)
	case KindArray:
		l.setNodeList(v, p, n, depth, omit, inList)
	case KindObject:
		if depth <= 0 {
			v.SetStr(string(p.appendCompact(nil, n, omit, inList, &l.nodeMembers)))
			return
		}
		l.putNodeMap(v.SetEmptyMap(), p, n, depth-1, omit, inList)
	}
}

// setNumber is setNumber of a number node, an integer read without
// making its text a string.
func (p *Payload) setNumber(v pcommon.Value, n Node) {
	if i, ok := intOfBytes(p.numberBytes(n)); ok {
		v.SetInt(i)
		return
	}
	setNumber(v, json.Number(p.numberText(n)))
}

// setNodeList is setList of an array node.
func (l *Limiter) setNodeList(v pcommon.Value, p *Payload, n Node, depth int, omit *Omission, inList bool) {
	if depth <= 0 {
		v.SetStr(string(p.appendCompact(nil, n, omit, inList, &l.nodeMembers)))
		return
	}
	s := v.SetEmptySlice()
	s.EnsureCapacity(p.count(n))
	for e := range p.Elements(n) {
		l.setNode(s.AppendEmpty(), p, e, depth-1, omit, inList)
	}
}

// count is the number of elements of an array node.
func (p *Payload) count(arr Node) int {
	c := 0
	for range p.Elements(arr) {
		c++
	}
	return c
}

// putNodeMap is putMap of an object node: its members sorted on a stack
// nested calls share, null ones and those omit names left out.
func (l *Limiter) putNodeMap(m pcommon.Map, p *Payload, obj Node, depth int, omit *Omission, inList bool) {
	base := len(l.nodeMembers)
	members := p.sortedMembers(&l.nodeMembers, obj, omit, inList, false)
	defer func() { l.nodeMembers = l.nodeMembers[:base] }()
	child := func(k string) bool { return omit != nil && k == omit.In }
	if m.Len() == 0 && len(members) >= minBulkKeys {
		l.putNodeMembersBulk(m, p, members, depth, omit, child)
		return
	}
	m.EnsureCapacity(m.Len() + min(len(members), l.opts.MaxMapEntries))
	for _, mb := range members {
		if v, ok := l.Put(m, mb.Key); ok {
			l.setNode(v, p, mb.Value, depth, omit, child(mb.Key))
		}
	}
}

// putNodeMembersBulk is putMembersBulk of an object node's members.
func (l *Limiter) putNodeMembersBulk(m pcommon.Map, p *Payload, members []NodeMember, depth int, omit *Omission, child func(string) bool) {
	keys := make([]string, len(members))
	for i := range members {
		keys[i] = members[i].Key
	}
	values, kept := l.Entries(m, keys)
	for i, mb := range members {
		if kept[i] {
			l.setNode(values[i], p, mb.Value, depth, omit, child(mb.Key))
		}
	}
}

// sortedMembers pushes obj's members onto stack as a Go map of them
// would hold them (one per key, the last one sent) sorted by key, leaving
// out those omit names, and the null ones unless withNull, and returns
// them. Nested calls push above them.
func (p *Payload) sortedMembers(stack *[]NodeMember, obj Node, omit *Omission, inList, withNull bool) []NodeMember {
	base := len(*stack)
	for k, v := range p.Members(obj) {
		if !omit.leavesOut(k, inList) {
			*stack = append(*stack, NodeMember{k, v})
		}
	}
	members := (*stack)[base:]
	sortNodeMembers(members)
	// of a repeated key the last one sent is the last of its run: stable
	kept := members[:0]
	for i, mb := range members {
		if i+1 < len(members) && members[i+1].Key == mb.Key {
			continue
		}
		if withNull || p.Kind(mb.Value) != KindNull {
			kept = append(kept, mb)
		}
	}
	*stack = (*stack)[:base+len(kept)]
	return kept
}

// sortNodeMembers is sortMembers, stable: a repeated key's members stay
// in the order sent.
func sortNodeMembers(members []NodeMember) {
	if len(members) > 16 {
		slices.SortStableFunc(members, func(a, b NodeMember) int { return strings.Compare(a.Key, b.Key) })
		return
	}
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].Key < members[j-1].Key; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
}

// appendCompact appends n's compact JSON text as compactText writes the
// value DecodeAny gives (encoding/json's Marshal: object keys sorted,
// a repeated key once, HTML characters escaped), without the members
// omit names.
func (p *Payload) appendCompact(b []byte, n Node, omit *Omission, inList bool, stack *[]NodeMember) []byte {
	switch p.Kind(n) {
	case KindString:
		return appendJSONString(b, p.strBytes(n))
	case KindNumber:
		return append(b, p.numberBytes(n)...)
	case KindTrue:
		return append(b, "true"...)
	case KindFalse:
		return append(b, "false"...)
	case KindArray:
		return p.appendCompactArray(b, n, omit, inList, stack)
	case KindObject:
		return p.appendCompactObject(b, n, omit, inList, stack)
	}
	return append(b, "null"...)
}

func (p *Payload) appendCompactArray(b []byte, n Node, omit *Omission, inList bool, stack *[]NodeMember) []byte {
	b = append(b, '[')
	first := true
	for e := range p.Elements(n) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = p.appendCompact(b, e, omit, inList, stack)
	}
	return append(b, ']')
}

func (p *Payload) appendCompactObject(b []byte, n Node, omit *Omission, inList bool, stack *[]NodeMember) []byte {
	base := len(*stack)
	members := p.sortedMembers(stack, n, omit, inList, true)
	defer func() { *stack = (*stack)[:base] }()
	b = append(b, '{')
	for i, mb := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, mb.Key)
		b = append(b, ':')
		b = p.appendCompact(b, mb.Value, omit, omit != nil && mb.Key == omit.In, stack)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json's Marshal quotes it
// (HTML characters, U+2028 and U+2029 escaped too).
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		// a few bytes as a string: copied on the stack, not allocated
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		} else {
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the escape of an ASCII byte a JSON string does
// not hold as it is.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// htmlSafe marks the ASCII bytes encoding/json writes as they are:
// printable but the quote, the backslash, "<", ">" and "&".
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune("\"\\<>&", c)
	}
	return t
}()

package sentrygrouping

import (
	"crypto/md5" //nolint:gosec // Sentry's grouping hash is MD5; it names a group, it protects nothing
	"encoding/hex"
)

// component is a node of Sentry's grouping component tree
// (src/sentry/grouping/component.py): a leaf holds one value, an inner
// node its children. Only contributing branches reach the hash.
type component struct {
	id          string
	value       string
	leaf        bool
	children    []*component
	contributes bool
	// inApp is a frame's in_app, counted by its stack trace.
	inApp bool
	// counts tallies the frames below a stack trace, exception or chain.
	counts frameCounts
}

// frameCounts tallies a stack trace's frames as Sentry's frame_counts do.
type frameCounts struct {
	inApp, inAppContributing, contributing int
}

func (c frameCounts) add(o frameCounts) frameCounts {
	return frameCounts{c.inApp + o.inApp, c.inAppContributing + o.inAppContributing, c.contributing + o.contributing}
}

// leaf is a component of one value; an empty value is a component that
// does not contribute, as Sentry's component of no values.
func leaf(id, value string) *component {
	return &component{id: id, value: value, leaf: value != "", contributes: value != ""}
}

// node is an inner component; it contributes when a child does, as
// Sentry derives contributes from the values it is built with.
func node(id string, children ...*component) *component {
	c := &component{id: id, children: children}
	for _, ch := range children {
		if ch.contributes {
			c.contributes = true
			break
		}
	}
	return c
}

// appendValues appends the values of the contributing branches, each as
// "<id>=<value>" when labelled, in tree order.
func (c *component) appendValues(dst []string, labelled bool) []string {
	if !c.contributes {
		return dst
	}
	if c.leaf {
		if labelled {
			return append(dst, c.id+"="+c.value)
		}
		return append(dst, c.value)
	}
	for _, ch := range c.children {
		dst = ch.appendValues(dst, labelled)
	}
	return dst
}

// hashValues is Sentry's hash_from_values: the MD5 of the values
// concatenated, without separators (src/sentry/grouping/utils.py).
func hashValues(values []string) string {
	h := md5.New() //nolint:gosec // see the import
	for _, v := range values {
		h.Write([]byte(v))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// signature is a text that tells two component trees apart, contributing
// or not: Sentry compares the exceptions of a group by their components'
// representation.
func (c *component) signature(dst []byte) []byte {
	dst = append(dst, c.id...)
	if c.contributes {
		dst = append(dst, '+')
	}
	if c.leaf {
		dst = append(dst, '=')
		dst = append(dst, c.value...)
	}
	dst = append(dst, '(')
	for _, ch := range c.children {
		dst = ch.signature(dst)
	}
	return append(dst, ')')
}

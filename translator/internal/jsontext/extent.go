package jsontext

import "bytes"

// StringEnd returns the index just past the JSON string that starts at
// b[i] == '"', or -1 when the input ends first. It jumps from quote to
// quote; a quote after an odd number of backslashes is escaped.
func StringEnd(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i+1:], '"')
		if q < 0 {
			return -1
		}
		i += 1 + q
		if backslashesBefore(b, i)%2 == 0 {
			return i + 1
		}
	}
}

// backslashesBefore counts the backslashes right before b[i] (b[0] is the
// opening quote, so the count stops there).
func backslashesBefore(b []byte, i int) int {
	n := 0
	for j := i - 1; b[j] == '\\'; j-- {
		n++
	}
	return n
}

// ValueEnd returns the index just past the JSON value that starts at b[i]
// (a string, an object, an array, or a number or literal, which end at a
// delimiter or at the end of b), or -1 when a string, object or array is
// not closed before the input ends. It follows strings and nesting without
// validating anything: callers either validated the text before or only use
// the extent as a key.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		return containerEnd(b, i)
	}
	return literalEnd(b, i) // number, true, false, null
}

// containerEnd is ValueEnd of the object or array at b[i]: past the
// bracket that closes it, strings and nesting followed; -1 when the input
// ends first.
func containerEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		if b[i] == '"' {
			if i = StringEnd(b, i); i < 0 {
				return -1
			}
			continue
		}
		if depth += nesting(b[i]); depth == 0 {
			return i + 1
		}
		i++
	}
	return -1
}

// nesting is how a byte outside strings changes the depth of objects and
// arrays.
func nesting(c byte) int {
	switch c {
	case '{', '[':
		return 1
	case '}', ']':
		return -1
	}
	return 0
}

// literalEnd is ValueEnd of the number or literal at b[i]: the next
// delimiter, or the end of b.
func literalEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return len(b)
}

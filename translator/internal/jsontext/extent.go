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
		backslashes := 0
		for j := i - 1; b[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i + 1
		}
	}
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
		switch b[i] {
		case '"':
			if i = StringEnd(b, i); i < 0 {
				return -1
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
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

package sentry

// The one set of Sentry id helpers: every package of the module that reads
// or writes an event, profile, chunk, profiler or trace id goes through
// CanonicalUUID (the translator, the receiver's answers, the exporter's
// envelopes).

// CanonicalUUID returns id as Sentry writes ids, 32 lower-case hex digits,
// when id is a UUID: 32 hex digits or the dashed 8-4-4-4-12 form, in any
// case. ok is false, and canonical empty, for anything else.
func CanonicalUUID(id string) (canonical string, ok bool) {
	if c := canonicalUUID(id); len(c) == 32 && isLowerHex(c) {
		return c, true
	}
	return "", false
}

// canonicalUUID returns id as 32 lower-case hex digits when it is a UUID
// written as 32 hex digits or in the dashed 8-4-4-4-12 form, in any case;
// else id unchanged. It allocates only when id changes.
func canonicalUUID(id string) string {
	if !uuidShaped(id) {
		return id
	}
	var buf [32]byte
	n := 0
	for i := 0; i < len(id); i++ {
		if len(id) == 36 && isUUIDDash(i) {
			continue
		}
		c, ok := lowerHexDigit(id[i])
		if !ok {
			return id
		}
		buf[n] = c
		n++
	}
	return string(buf[:])
}

// uuidShaped reports whether id has a UUID's length and dashes and may
// change when made canonical (32 lower-case hex digits already are).
func uuidShaped(id string) bool {
	switch len(id) {
	case 32:
		return !isLowerHex(id)
	case 36:
		return id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-'
	}
	return false
}

// isUUIDDash reports whether i is where the dashed form has a dash.
func isUUIDDash(i int) bool { return i == 8 || i == 13 || i == 18 || i == 23 }

// lowerHexDigit is c as a lower-case hex digit, if it is a hex digit.
func lowerHexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		return c, true
	case c >= 'A' && c <= 'F':
		return c + 'a' - 'A', true
	}
	return 0, false
}

// isUUID reports whether id is a UUID in a form canonicalUUID accepts.
func isUUID(id string) bool {
	c := canonicalUUID(id)
	return len(c) == 32 && isLowerHex(c)
}

// isNilUUID reports whether a UUID is all zeros.
func isNilUUID(id string) bool {
	for i := 0; i < len(id); i++ {
		if id[i] != '0' && id[i] != '-' {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// lowerHex lower-cases s when it is made of hex digits only.
func lowerHex(s string) string {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			upper = true
		default:
			return s
		}
	}
	if !upper {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

package sentry

// pointerAuthenticationMask keeps the 36 address bits of an arm64e pointer
// and drops its pointer-authentication code, as Relay does (after
// plcrashreporter's PLCrashAsyncThread_arm.c).
const pointerAuthenticationMask = 0x0000000FFFFFFFFF

// Normalize corrects p in place without dropping any of its data:
//
//   - It strips pointer-authentication bits from frame instruction_addr,
//     symbol_addr and image_addr where Relay does: cocoa V1 profiles whose
//     device.architecture is arm64 or arm64e, and every cocoa V2 chunk (V2
//     carries no architecture). Relay itself masks only instruction_addr; the
//     other two are masked too so that an address and the symbol or image it
//     falls in stay comparable.
//   - It lower-cases and removes the dashes of event_id, profiler_id,
//     chunk_id and of each transaction's id and trace_id when they are
//     UUIDs (32 hex digits, or the dashed 8-4-4-4-12 form), and lower-cases
//     segment_id when it is hex. Anything else is left as sent for Validate
//     to report.
//
// It sorts nothing and applies none of Relay's lossy normalizations (trimming
// idle samples at thread edges, dropping threads with a single sample,
// dropping samples outside the transaction's range, dropping unreferenced
// thread metadata).
func Normalize(p *Profile) {
	if stripsPointerAuthentication(p) {
		for i := range p.Frames {
			f := &p.Frames[i]
			f.InstructionAddr &= pointerAuthenticationMask
			f.SymbolAddr &= pointerAuthenticationMask
			f.ImageAddr &= pointerAuthenticationMask
		}
	}
	p.EventID = canonicalUUID(p.EventID)
	p.ProfilerID = canonicalUUID(p.ProfilerID)
	p.ChunkID = canonicalUUID(p.ChunkID)
	for i := range p.Transactions {
		t := &p.Transactions[i]
		t.ID = canonicalUUID(t.ID)
		t.TraceID = canonicalUUID(t.TraceID)
		t.SegmentID = lowerHex(t.SegmentID)
	}
}

func stripsPointerAuthentication(p *Profile) bool {
	if p.Platform != "cocoa" {
		return false
	}
	switch p.Version {
	case VersionV1:
		return p.Device.Architecture == "arm64" || p.Device.Architecture == "arm64e"
	case VersionV2:
		return true
	}
	return false
}

// canonicalUUID returns id as 32 lower-case hex digits when it is a UUID
// written as 32 hex digits or in the dashed 8-4-4-4-12 form, in any case;
// else id unchanged. It allocates only when id changes.
func canonicalUUID(id string) string {
	switch len(id) {
	case 32:
		if isLowerHex(id) {
			return id
		}
	case 36:
		if id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
			return id
		}
	default:
		return id
	}
	var buf [32]byte
	n := 0
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case len(id) == 36 && (i == 8 || i == 13 || i == 18 || i == 23):
			continue
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return id
		}
		buf[n] = c
		n++
	}
	return string(buf[:])
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

package translator

import (
	"encoding/hex"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The id and address helpers of both directions, and of the receiver's span
// index.

// parseID16 decodes a 32-hex-digit Sentry id (dashes allowed); zero when it
// is not one.
func parseID16(s string) [16]byte {
	var id [16]byte
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return id
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return [16]byte{}
	}
	return id
}

// ParseTraceID decodes a Sentry trace id (32 hex digits, dashes allowed);
// zero when it is not one.
func ParseTraceID(s string) pcommon.TraceID { return pcommon.TraceID(parseID16(s)) }

// ParseSpanID decodes a Sentry span id (16 hex digits); zero when it is not
// one.
func ParseSpanID(s string) pcommon.SpanID {
	var id pcommon.SpanID
	if len(s) != 16 {
		return id
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return pcommon.SpanID{}
	}
	return id
}

// hexAddr writes an address as Sentry does: 0x and lower-case hex.
func hexAddr(v uint64) string {
	return "0x" + strconv.FormatUint(v, 16)
}

// parseHexAddr reads a Sentry address: 0x-prefixed hex, or decimal.
func parseHexAddr(s string) (uint64, bool) {
	h, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	if !ok {
		n, err := strconv.ParseUint(s, 10, 64)
		return n, err == nil
	}
	n, err := strconv.ParseUint(h, 16, 64)
	return n, err == nil
}

// uuidV4Hex formats 16 bytes of a digest as the 32 hex digits of a UUID with
// the version-4 and variant bits set, the shape Sentry ids have.
func uuidV4Hex(id [16]byte) string {
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return hex.EncodeToString(id[:])
}

// normalizeID returns a 32-hex-digit id in lower case without dashes, or ""
// when s is not one.
func normalizeID(s string) string {
	id := parseID16(strings.ToLower(s))
	if id == ([16]byte{}) {
		return ""
	}
	return hex.EncodeToString(id[:])
}

// isHexID reports whether id is a UUID as 32 lower-case hex digits.
func isHexID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

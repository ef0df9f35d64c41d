package translator

import (
	"encoding/hex"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// The id and address helpers of both directions, and of the receiver's span
// index.

// parseID16 decodes a Sentry id (a UUID as sentry.CanonicalUUID reads
// it); zero when it is not one.
func parseID16(s string) [16]byte {
	var id [16]byte
	c, ok := sentry.CanonicalUUID(s)
	if !ok {
		return id
	}
	if _, err := hex.Decode(id[:], []byte(c)); err != nil {
		return [16]byte{}
	}
	return id
}

// ParseTraceID decodes a Sentry trace id (32 hex digits, or the dashed UUID
// form); zero when it is not one.
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

// parseHexAddr reads a Sentry address: 0x-prefixed hex, or decimal; 0,
// Sentry's "no address", when s is neither.
func parseHexAddr(s string) uint64 {
	h, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	base := 16
	if !ok {
		h, base = s, 10
	}
	n, err := strconv.ParseUint(h, base, 64)
	if err != nil {
		return 0
	}
	return n
}

// uuidV4Hex formats 16 bytes of a digest as the 32 hex digits of a UUID with
// the version-4 and variant bits set, the shape Sentry ids have.
func uuidV4Hex(id [16]byte) string {
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return hex.EncodeToString(id[:])
}

// normalizeID returns a Sentry id as 32 lower-case hex digits, or "" when
// s is not one.
func normalizeID(s string) string {
	c, _ := sentry.CanonicalUUID(s)
	return c
}

// isHexID reports whether id is already a Sentry id as written: 32
// lower-case hex digits.
func isHexID(id string) bool {
	c, ok := sentry.CanonicalUUID(id)
	return ok && c == id
}

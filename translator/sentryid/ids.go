// Package sentryid reads and writes the ids and addresses of Sentry
// payloads the way both directions of the translator and the span index's
// view need them: trace, span and event ids, hex addresses, the digests
// written as v4-shaped UUIDs, and a span's "thread.id" as chunks write it.
package sentryid

import (
	"encoding/hex"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// Parse decodes a Sentry id (a UUID as sentry.CanonicalUUID reads
// it); zero when it is not one.
func Parse(s string) [16]byte {
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

// TraceID decodes a Sentry trace id (32 hex digits, or the dashed UUID
// form); zero when it is not one.
func TraceID(s string) pcommon.TraceID { return pcommon.TraceID(Parse(s)) }

// SpanID decodes a Sentry span id (16 hex digits); zero when it is not
// one.
func SpanID(s string) pcommon.SpanID {
	var id pcommon.SpanID
	if len(s) != 16 {
		return id
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return pcommon.SpanID{}
	}
	return id
}

// HexAddr writes an address as Sentry does: 0x and lower-case hex.
func HexAddr(v uint64) string {
	return "0x" + strconv.FormatUint(v, 16)
}

// ParseHexAddr reads a Sentry address: 0x-prefixed hex, or decimal; 0,
// Sentry's "no address", when s is neither.
func ParseHexAddr(s string) uint64 {
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

// UUIDv4Hex formats 16 bytes of a digest as the 32 hex digits of a UUID with
// the version-4 and variant bits set, the shape Sentry ids have.
func UUIDv4Hex(id [16]byte) string {
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return hex.EncodeToString(id[:])
}

// Normalize returns a Sentry id as 32 lower-case hex digits, or "" when
// s is not one.
func Normalize(s string) string {
	c, _ := sentry.CanonicalUUID(s)
	return c
}

// IsCanonical reports whether id is already a Sentry id as written: 32
// lower-case hex digits.
func IsCanonical(id string) bool {
	c, ok := sentry.CanonicalUUID(id)
	return ok && c == id
}

// ThreadIDText renders a span's thread.id (a number or a string) as Sentry
// chunks write thread ids: decimal text.
func ThreadIDText(v any) string {
	switch id := v.(type) {
	case string:
		return id
	case int64:
		return strconv.FormatInt(id, 10)
	case float64:
		if id >= 0 && id == float64(int64(id)) {
			return strconv.FormatInt(int64(id), 10)
		}
	}
	return ""
}

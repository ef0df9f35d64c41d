package envelope

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the envelope header as one line of JSON, without the
// newline that ends it in an envelope. The output is deterministic: event_id,
// dsn, sent_at and sdk in that order, empty strings and a nil SDK omitted.
// Raw is not consulted: a written header holds only the decoded fields.
func (h Header) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	n := len(dst)
	dst = appendStringMember(dst, n, "event_id", h.EventID)
	dst = appendStringMember(dst, n, "dsn", h.DSN)
	dst = appendStringMember(dst, n, "sent_at", h.SentAt)
	if h.SDK != nil {
		dst = appendKey(dst, n, "sdk")
		dst = append(dst, `{"name":`...)
		dst = appendString(dst, h.SDK.Name)
		dst = append(dst, `,"version":`...)
		dst = appendString(dst, h.SDK.Version)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// AppendItem appends one item: its header line, the payload and the newline
// that ends it. The header holds "type", "length" (always, taken from the
// payload so that any bytes, newlines included, survive) and whichever of
// content_type, filename and platform are set. h.Length and h.Raw are not
// consulted.
func AppendItem(dst []byte, h ItemHeader, payload []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, h.Type)
	dst = append(dst, `,"length":`...)
	dst = strconv.AppendInt(dst, int64(len(payload)), 10)
	// objectStart 0: "type" and "length" precede, so a comma is always due.
	dst = appendStringMember(dst, 0, "content_type", h.ContentType)
	dst = appendStringMember(dst, 0, "filename", h.Filename)
	dst = appendStringMember(dst, 0, "platform", h.Platform)
	dst = append(dst, "}\n"...)
	dst = append(dst, payload...)
	return append(dst, '\n')
}

// appendStringMember appends "key":"value" unless value is empty. objectStart
// is len(dst) right after the object's "{", to know whether a comma is due.
func appendStringMember(dst []byte, objectStart int, key, value string) []byte {
	if value == "" {
		return dst
	}
	dst = appendKey(dst, objectStart, key)
	return appendString(dst, value)
}

func appendKey(dst []byte, objectStart int, key string) []byte {
	if len(dst) > objectStart {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; U+2028 and U+2029 are escaped so the line stays safe
// for JavaScript consumers.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

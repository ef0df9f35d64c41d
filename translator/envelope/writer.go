package envelope

import (
	"strconv"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/jsontext"
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
		dst = jsontext.AppendString(dst, h.SDK.Name)
		dst = append(dst, `,"version":`...)
		dst = jsontext.AppendString(dst, h.SDK.Version)
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
	dst = jsontext.AppendString(dst, h.Type)
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
	return jsontext.AppendString(dst, value)
}

func appendKey(dst []byte, objectStart int, key string) []byte {
	if len(dst) > objectStart {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

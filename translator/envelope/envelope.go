// Package envelope reads and writes Sentry envelopes, the container SDKs
// POST to /api/{project_id}/envelope/:
//
//	EnvelopeHeader \n ( ItemHeader \n Payload \n )*
//
// Every header is one line holding one JSON object. An item whose header has
// a "length" carries exactly that many payload bytes, followed by "\n" or the
// end of the input; an item without one runs to the next "\n" or the end.
//
// The reader follows Relay's parser where the grammar leaves room:
//   - JSON whitespace (space, tab, "\r", "\n") before a header is skipped, so
//     blank lines between items are accepted; whitespace with no item header
//     after it ends the input in the middle of an item and is an error.
//   - A header must be followed directly by "\n" or the end of the input:
//     "\r\n" line endings and trailing spaces are errors. "\r" is an ordinary
//     payload byte.
//   - Unknown header keys are allowed and kept only in the verbatim Raw line.
//
// It is stricter than Relay in one place: a header must fit on one line (Relay
// would accept a JSON object spread over several lines, no SDK sends one).
//
// The reader is streaming and bounded: it never allocates on the strength of
// a claimed length, only as bytes arrive, and it can skip an item over a size
// limit without storing it.
package envelope

import (
	"errors"
	"fmt"
)

// Header is the envelope header: the first line of an envelope.
//
// Only the fields this project uses are decoded; the line itself is kept in
// Raw, so nothing the SDK sent is lost.
type Header struct {
	EventID string // "event_id"
	DSN     string // "dsn"
	SentAt  string // "sent_at" (RFC 3339), not parsed here
	SDK     *SDK   // "sdk"; nil when absent or not an object
	Raw     []byte // the header line verbatim (a JSON object; "{}" is valid); unknown keys live only here
}

// SDK is the envelope header's "sdk" object.
type SDK struct {
	Name    string // "name"
	Version string // "version"
}

// ItemHeader is the header line of one envelope item.
type ItemHeader struct {
	Type        string // "type" (required)
	Length      int64  // "length"; -1 when absent
	ContentType string // "content_type", not validated: Java SDKs send "application-json"
	Filename    string // "filename"
	Platform    string // "platform"
	Raw         []byte // the item header line verbatim; unknown keys live only here
}

// Item is one envelope item.
type Item struct {
	Header    ItemHeader
	Payload   []byte // nil when Oversized; never nil otherwise
	Size      int64  // payload size in bytes, also when the payload was skipped
	Oversized bool   // the payload was larger than Limits.MaxItemBytes and was skipped without being stored
}

// Limits bound what a Reader accepts. The zero value imposes no limit on
// items and the default limit on header lines.
type Limits struct {
	// MaxItemBytes caps the payload of one item; a larger item is skipped and
	// returned with Oversized set. 0 means unlimited.
	MaxItemBytes int64
	// MaxItems caps the number of items; reaching one more item header is
	// ErrTooManyItems. 0 means unlimited.
	MaxItems int
	// MaxHeaderBytes caps every header line (envelope and item headers), not
	// counting the newline. 0 means DefaultMaxHeaderBytes.
	MaxHeaderBytes int
}

// DefaultMaxHeaderBytes is the header line limit when Limits.MaxHeaderBytes is
// 0. Real headers are well under 2 KiB (the largest, Android's envelope
// header with its package list, is about 1 KiB).
const DefaultMaxHeaderBytes = 64 << 10

var (
	// ErrTooManyItems is returned when an envelope holds more items than
	// Limits.MaxItems.
	ErrTooManyItems = errors.New("too many items in envelope")
	// ErrHeaderTooLarge is returned when a header line is longer than
	// Limits.MaxHeaderBytes. The reader cannot find the next item after it.
	ErrHeaderTooLarge = errors.New("envelope header line too large")
)

// SyntaxError reports an envelope that does not follow the grammar. After a
// SyntaxError the Reader returns the same error forever: without a trusted
// length there is no way to find the next item.
type SyntaxError struct {
	Offset int64  // byte offset in the (decompressed) envelope where the problem was found
	Item   int    // index of the item being read; -1 for the envelope header
	Msg    string // what is wrong
	Err    error  // the cause, if any: io.ErrUnexpectedEOF for a truncated envelope, or a JSON error
}

func (e *SyntaxError) Error() string {
	where := "envelope header"
	if e.Item >= 0 {
		where = fmt.Sprintf("item %d", e.Item)
	}
	s := fmt.Sprintf("envelope: %s at offset %d: %s", where, e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *SyntaxError) Unwrap() error { return e.Err }

package sentrytime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Time is a Sentry timestamp as Unix nanoseconds.
type Time int64

// The errors of the parsers, each wrapped with the text it refused.
var (
	// ErrMissing is an absent, empty or null timestamp.
	ErrMissing = errors.New("missing")
	// ErrSyntax is text that is neither seconds nor RFC 3339.
	ErrSyntax = errors.New("not a timestamp")
	// ErrOutOfRange is a timestamp whose Unix nanoseconds do not fit an
	// int64 (see the package documentation).
	ErrOutOfRange = errors.New("timestamp out of range for Unix nanoseconds")
)

// Earliest and Latest are the first and last instants a Time holds.
var (
	Earliest = time.Unix(0, math.MinInt64).UTC()
	Latest   = time.Unix(0, math.MaxInt64).UTC()
)

// UnixNano is t as Unix nanoseconds.
func (t Time) UnixNano() int64 { return int64(t) }

// Time is t as a UTC time.Time.
func (t Time) Time() time.Time { return time.Unix(0, int64(t)).UTC() }

// FromTime is the Time of tm, refused with ErrOutOfRange outside
// [Earliest, Latest].
func FromTime(tm time.Time) (Time, error) {
	if tm.Before(Earliest) || tm.After(Latest) {
		return 0, fmt.Errorf("%w: %s", ErrOutOfRange, tm.UTC().Format(time.RFC3339Nano))
	}
	return Time(tm.UnixNano()), nil
}

// Parse reads the JSON text of a timestamp: a number of seconds, or a
// string holding RFC 3339 or seconds. Surrounding whitespace is ignored;
// empty text and null are ErrMissing.
func Parse(raw []byte) (Time, error) {
	text := bytes.TrimSpace(raw)
	switch {
	case len(text) == 0 || string(text) == "null":
		return 0, ErrMissing
	case text[0] == '"':
		return parseJSONString(text)
	}
	return ParseSeconds(text)
}

// parseJSONString reads a quoted timestamp; only a string with escapes
// goes through encoding/json.
func parseJSONString(text []byte) (Time, error) {
	if len(text) >= 2 && text[len(text)-1] == '"' && bytes.IndexByte(text[1:len(text)-1], '\\') < 0 {
		return ParseText(text[1 : len(text)-1])
	}
	var s string
	if err := json.Unmarshal(text, &s); err != nil {
		return 0, fmt.Errorf("%w: %.40s", ErrSyntax, text)
	}
	return ParseString(s)
}

// ParseString reads a timestamp written as a string: RFC 3339 with any
// fraction of a second, or seconds as decimal text.
func ParseString(s string) (Time, error) {
	return ParseText([]byte(s))
}

// ParseText is ParseString of the string's bytes (its content, unquoted).
func ParseText(text []byte) (Time, error) {
	// "YYYY-" starts a date and no number of seconds.
	if len(text) > 4 && text[4] == '-' {
		return ParseRFC3339(string(text))
	}
	return ParseSeconds(text)
}

// ParseRFC3339 reads an RFC 3339 date-time; digits of the second's
// fraction beyond the ninth are truncated.
func ParseRFC3339(s string) (Time, error) {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%w: %.40q is not RFC 3339", ErrSyntax, s)
	}
	return FromTime(tm)
}

package sentrysignal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// maxSeconds is the last second whose nanoseconds fit an int64 (in the
// year 2262), the range of OTLP timestamps as Go's time package reads them.
const maxSeconds = math.MaxInt64/int64(time.Second) - 1

// ErrMissing is returned for an absent or null field that is required.
var ErrMissing = errors.New("missing")

// Timestamp reads Sentry's timestamps: seconds since the epoch as a JSON
// number (read from its decimal text, so microseconds survive), or an RFC
// 3339 string.
func Timestamp(raw json.RawMessage) (pcommon.Timestamp, error) {
	text := bytes.TrimSpace(raw)
	if len(text) == 0 || string(text) == "null" {
		return 0, ErrMissing
	}
	if text[0] == '"' {
		var s string
		if err := json.Unmarshal(text, &s); err != nil {
			return 0, err
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return fromTime(t)
		}
		// Some SDKs quote the epoch seconds.
		text = []byte(s)
	}
	ns, err := secondsText(string(text))
	if err != nil {
		return 0, err
	}
	return pcommon.Timestamp(ns), nil
}

// secondsText converts decimal seconds to nanoseconds exactly for the plain
// form SDKs write ("1746456149.019"), through float64 for exponents.
func secondsText(s string) (int64, error) {
	intPart, frac, plain := splitDecimal(s)
	if !plain {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > float64(maxSeconds) {
			return 0, fmt.Errorf("not a timestamp in seconds: %.40s", s)
		}
		return int64(f * 1e9), nil
	}
	sec, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil || sec < 0 || sec > maxSeconds {
		return 0, fmt.Errorf("not a timestamp in seconds: %.40s", s)
	}
	var ns int64
	for i := 0; i < 9; i++ {
		ns *= 10
		if i < len(frac) {
			ns += int64(frac[i] - '0')
		}
	}
	if len(frac) > 9 && frac[9] >= '5' {
		ns++ // round half up to the nanosecond
	}
	return sec*1e9 + ns, nil
}

// splitDecimal splits "123.456" into its digits; plain is false for signs,
// exponents and anything else.
func splitDecimal(s string) (intPart, frac string, plain bool) {
	dot := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot == len(s) && i > 0:
			dot = i
		default:
			return "", "", false
		}
	}
	if dot == len(s) {
		return s, "", len(s) > 0
	}
	return s[:dot], s[dot+1:], true
}

// TimestampOf reads a timestamp decoded by DecodeAny (a json.Number or a
// string), as Timestamp reads its JSON text.
func TimestampOf(x any) (pcommon.Timestamp, error) {
	switch t := x.(type) {
	case nil:
		return 0, ErrMissing
	case json.Number:
		ns, err := secondsText(string(t))
		return pcommon.Timestamp(ns), err
	case string:
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return fromTime(ts)
		}
		ns, err := secondsText(t)
		return pcommon.Timestamp(ns), err
	}
	return 0, fmt.Errorf("a timestamp cannot be a %T", x)
}

// fromTime refuses times before the epoch, which OTLP cannot hold, and
// after 2262, whose nanoseconds overflow an int64.
func fromTime(t time.Time) (pcommon.Timestamp, error) {
	if t.Before(time.Unix(0, 0)) || t.After(time.Unix(maxSeconds, 0)) {
		return 0, fmt.Errorf("outside 1970–2262: %s", t.Format(time.RFC3339))
	}
	return pcommon.NewTimestampFromTime(t), nil
}

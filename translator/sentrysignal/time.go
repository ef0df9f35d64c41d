package sentrysignal

import (
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
)

// ErrMissing is returned for an absent or null field that is required.
var ErrMissing = sentrytime.ErrMissing

// Timestamp reads Sentry's timestamps (translator/internal/sentrytime):
// seconds since the epoch as a JSON number, read from its decimal text so
// that microseconds survive, or an RFC 3339 string. OTLP holds no time
// before the epoch: those are refused too.
func Timestamp(raw json.RawMessage) (pcommon.Timestamp, error) {
	t, err := sentrytime.Parse(raw)
	if err != nil {
		return 0, err
	}
	return afterEpoch(t)
}

// TimestampOf reads a timestamp decoded by DecodeAny (a json.Number or a
// string), as Timestamp reads its JSON text.
func TimestampOf(x any) (pcommon.Timestamp, error) {
	var t sentrytime.Time
	var err error
	switch v := x.(type) {
	case nil:
		return 0, ErrMissing
	case json.Number:
		return timestampOfSeconds([]byte(v))
	case string:
		t, err = sentrytime.ParseString(v)
	default:
		return 0, fmt.Errorf("a timestamp cannot be a %T", x)
	}
	if err != nil {
		return 0, err
	}
	return afterEpoch(t)
}

// afterEpoch refuses times before the epoch, which OTLP cannot hold.
func afterEpoch(t sentrytime.Time) (pcommon.Timestamp, error) {
	if t < 0 {
		return 0, fmt.Errorf("%w: %s is before 1970", sentrytime.ErrOutOfRange, t.Time().Format(time.RFC3339Nano))
	}
	return pcommon.Timestamp(t), nil
}

// timestampOfSeconds reads the decimal seconds of a JSON number's text.
func timestampOfSeconds(text []byte) (pcommon.Timestamp, error) {
	t, err := sentrytime.ParseSeconds(text)
	if err != nil {
		return 0, err
	}
	return afterEpoch(t)
}

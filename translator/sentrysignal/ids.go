package sentrysignal

import (
	"encoding/hex"
	"errors"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

var errID = errors.New("not a hex id")

// TraceID reads a Sentry trace id: 32 hex digits or the dashed UUID form.
func TraceID(s string) (pcommon.TraceID, error) {
	var id pcommon.TraceID
	if len(s) == 36 {
		s = strings.ReplaceAll(s, "-", "")
	}
	if len(s) != 32 {
		return id, errID
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return pcommon.TraceID{}, errID
	}
	return id, nil
}

// SpanID reads a Sentry span id: 16 hex digits.
func SpanID(s string) (pcommon.SpanID, error) {
	var id pcommon.SpanID
	if len(s) != 16 {
		return id, errID
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return pcommon.SpanID{}, errID
	}
	return id, nil
}

// EventID normalizes an event id to Sentry's 32 lower-case hex digits;
// false when it is not one.
func EventID(s string) (string, bool) {
	id, err := TraceID(s)
	if err != nil {
		return "", false
	}
	return hex.EncodeToString(id[:]), true
}

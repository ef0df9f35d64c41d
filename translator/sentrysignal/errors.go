package sentrysignal

import (
	"strconv"
	"strings"
)

// DecodeError says which item, which field (and, in a container, which
// entry) could not be decoded, and why.
type DecodeError struct {
	// Item is the envelope item type ("event", "log", "trace_metric", …).
	Item string
	// Index is the entry of a container, or -1 for the payload as a whole.
	Index int
	// Field is the JSON path of the offending field, empty for the payload.
	Field string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, when there is one.
	Err error
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("sentry ")
	b.WriteString(e.Item)
	if e.Index >= 0 {
		b.WriteString(" entry ")
		b.WriteString(strconv.Itoa(e.Index))
	}
	if e.Field != "" {
		b.WriteString(" field ")
		b.WriteString(strconv.Quote(e.Field))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// PayloadError is a DecodeError about a whole payload.
func PayloadError(item, field, reason string, err error) *DecodeError {
	return &DecodeError{Item: item, Index: -1, Field: field, Reason: reason, Err: err}
}

// EntryError is a DecodeError about one entry of a container.
func EntryError(item string, index int, field, reason string, err error) *DecodeError {
	return &DecodeError{Item: item, Index: index, Field: field, Reason: reason, Err: err}
}

func itoa(n int) string { return strconv.Itoa(n) }

// maxKeptEntryErrors bounds the entry errors a PartialError keeps, so that
// a container of bad entries costs bounded memory.
const maxKeptEntryErrors = 8

// PartialError says that entries of a container were dropped while the
// others were appended.
type PartialError struct {
	Item    string
	Dropped int
	// Errors holds the first few entries' errors.
	Errors []*DecodeError
}

func (e *PartialError) Error() string {
	msg := "sentry " + e.Item + ": " + itoa(e.Dropped) + " entries dropped"
	if len(e.Errors) > 0 {
		msg += ", first: " + e.Errors[0].Error()
	}
	return msg
}

// Unwrap returns the kept entry errors, for errors.As.
func (e *PartialError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, de := range e.Errors {
		out[i] = de
	}
	return out
}

// Add records a dropped entry.
func (e *PartialError) Add(de *DecodeError) {
	e.Dropped++
	if len(e.Errors) < maxKeptEntryErrors {
		e.Errors = append(e.Errors, de)
	}
}

// Err returns e when an entry was dropped, else nil.
func (e *PartialError) Err() error {
	if e.Dropped == 0 {
		return nil
	}
	return e
}

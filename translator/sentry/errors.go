package sentry

import (
	"fmt"
	"strings"
)

// Reason is a Relay discard reason: the outcome code Sentry reports when it
// drops a profile, reused here so operators see the same vocabulary.
type Reason string

// The reasons Relay uses for profiles (relay-profiling outcomes), plus the
// envelope-level ones this project needs.
const (
	ReasonExceedSizeLimit            Reason = "profiling_exceed_size_limit"
	ReasonInvalidJSON                Reason = "profiling_invalid_json"
	ReasonInvalidSampledProfile      Reason = "profiling_invalid_sampled_profile"
	ReasonInvalidTransactionMetadata Reason = "profiling_invalid_transaction_metadata"
	ReasonMalformedSamples           Reason = "profiling_malformed_samples"
	ReasonMalformedStacks            Reason = "profiling_malformed_stacks"
	ReasonMissingProfileMetadata     Reason = "profiling_invalid_profile_metadata"
	ReasonNoTransactionAssociated    Reason = "profiling_no_transaction_associated"
	ReasonNotEnoughSamples           Reason = "profiling_not_enough_samples"
	ReasonPlatformNotSupported       Reason = "profiling_platform_not_supported"
	ReasonDurationIsTooLong          Reason = "profiling_duration_is_too_long"
	ReasonTooManyProfiles            Reason = "profiling_too_many_profiles"
	ReasonUnsupportedVersion         Reason = "profiling_unsupported_version"
)

// Error is a rejected profile: the Relay reason and where the problem is.
// Positions that do not apply are -1.
type Error struct {
	Reason Reason
	Item   int // index of the envelope item, -1 when unknown
	Sample int // index in profile.samples, -1 when not about a sample
	Stack  int // index in profile.stacks, -1 when not about a stack
	Frame  int // index in profile.frames, -1 when not about a frame
	Msg    string
	Err    error // the underlying cause, if any
}

// NewError returns an Error with every position unset.
func NewError(reason Reason, msg string) *Error {
	return &Error{Reason: reason, Item: -1, Sample: -1, Stack: -1, Frame: -1, Msg: msg}
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Reason))
	for _, p := range [...]struct {
		name string
		at   int
	}{{"item", e.Item}, {"sample", e.Sample}, {"stack", e.Stack}, {"frame", e.Frame}} {
		if p.at >= 0 {
			fmt.Fprintf(&b, " %s %d", p.name, p.at)
		}
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// AtItem returns a copy of e located at envelope item i.
func (e *Error) AtItem(i int) *Error {
	c := *e
	c.Item = i
	return &c
}

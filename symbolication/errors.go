package symbolication

import (
	"context"
	"errors"
	"net"
)

// Sentinel errors of Resolver.Resolve, one per way an artifact can fail a
// frame; a resolver wraps the one that says why, and a Cache remembers
// each for its own retry time (Failure).
var (
	// ErrNoArtifact: no source map, mapping or debug file is known for
	// the frame (not found).
	ErrNoArtifact = errors.New("no artifact for the frame")
	// ErrNoMatch: the artifact has nothing at the frame's position.
	ErrNoMatch = errors.New("artifact has no entry at the frame's position")
	// ErrMalformed: the artifact was read but could not be parsed.
	ErrMalformed = errors.New("artifact is malformed")
	// ErrFetch: the artifact could not be read or fetched (an I/O error,
	// a server's error status, a file over its size bound).
	ErrFetch = errors.New("artifact could not be fetched")
	// ErrTimeout: reading or fetching the artifact took longer than its
	// own bound (a debuginfod request's timeout).
	ErrTimeout = errors.New("fetching the artifact timed out")
	// ErrPending: the artifact is being scanned for or fetched and was not
	// ready when the caller's context ended. Unlike the others it says
	// nothing about the artifact, so it is never remembered.
	ErrPending = errors.New("artifact not ready yet")
)

// Failure classifies what an error says about an artifact, for how long a
// cache remembers it.
type Failure uint8

// The failures of a load, from a Resolver's sentinel errors.
const (
	// FailureNone: no error.
	FailureNone Failure = iota
	// FailurePending: nothing lasting (ErrPending, a caller's context
	// ended); never remembered.
	FailurePending
	// FailureNotFound: ErrNoArtifact or ErrNoMatch.
	FailureNotFound
	// FailureMalformed: ErrMalformed.
	FailureMalformed
	// FailureTimeout: ErrTimeout, a deadline or a network timeout of the
	// load itself.
	FailureTimeout
	// FailureFetch: any other error (ErrFetch, I/O).
	FailureFetch
)

// failureOfSentinel is the failure each sentinel error says, in the order
// they are checked: an error wrapping a context's end is pending whatever
// else it wraps.
var failureOfSentinel = [...]struct {
	err     error
	failure Failure
}{
	{ErrPending, FailurePending},
	{context.Canceled, FailurePending},
	{ErrTimeout, FailureTimeout},
	{context.DeadlineExceeded, FailureTimeout},
	{ErrNoArtifact, FailureNotFound},
	{ErrNoMatch, FailureNotFound},
	{ErrMalformed, FailureMalformed},
}

// FailureOf classifies err. A context's end counts as pending: whose
// context it was is for the caller to know (Cache treats the end of its
// loader's context so). A network timeout is a timeout; any other error
// a fetch error.
func FailureOf(err error) Failure {
	if err == nil {
		return FailureNone
	}
	for _, s := range failureOfSentinel {
		if errors.Is(err, s.err) {
			return s.failure
		}
	}
	if isNetTimeout(err) {
		return FailureTimeout
	}
	return FailureFetch
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Transient reports whether err says nothing lasting about an artifact: it
// wraps ErrPending or a context's end. It is how a caller whose own
// context bounded the call tells "not ready" from a failure.
func Transient(err error) bool {
	return errors.Is(err, ErrPending) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

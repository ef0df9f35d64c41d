package pyroscope

import (
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
)

// DefaultMaxSamples is Pyroscope's default per-tenant limit
// max_profile_stacktrace_samples (-validation.max-profile-stacktrace-samples,
// pkg/validation/limits.go, Aug 2026): the most samples one profile may
// hold. Pyroscope counts them as they arrive, one per OTLP Sample of the
// profile's service, before it merges duplicate stacks.
const DefaultMaxSamples = 16000

// Store is what Pyroscope keeps of the export requests it ingests, and the
// total it then shows per service. It models the ingest rule that drops
// whole profiles (pkg/validation/validate.go, ValidateProfile): a profile
// whose service has more samples than the limit is refused; the other
// profiles of the same request are kept, and the request is answered 400
// (the distributor pushes every series, pkg/distributor PushBatch, and
// reports the refusals together).
type Store struct {
	maxSamples int

	mu      sync.Mutex
	totals  map[string]int64
	refused []Series
}

// NewStore returns an empty Store refusing profiles of more than
// maxSamples samples (0: no limit, as Pyroscope's 0).
func NewStore(maxSamples int) *Store {
	return &Store{maxSamples: maxSamples, totals: map[string]int64{}}
}

// Push ingests one ExportProfilesServiceRequest message. An error is a
// request Pyroscope answers 400: one it cannot read (nothing is kept), or
// one with profiles over the sample limit (the others are kept).
func (s *Store) Push(req proto.Message) error {
	series, err := Read(req)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, sr := range series {
		if s.maxSamples > 0 && sr.Samples > s.maxSamples {
			s.refused = append(s.refused, sr)
			errs = append(errs, fmt.Errorf("the profile of service %s exceeds the samples count limit (max_profile_stacktrace_samples, actual: %d, limit: %d)", sr.Service, sr.Samples, s.maxSamples))
			continue
		}
		s.totals[sr.Service] += sr.Total
	}
	return errors.Join(errs...)
}

// Totals is the wall time each service shows, in the series' unit.
func (s *Store) Totals() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.totals))
	for k, v := range s.totals {
		out[k] = v
	}
	return out
}

// Refused are the profiles the sample limit refused, in arrival order.
func (s *Store) Refused() []Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Series(nil), s.refused...)
}

// Package profilestest holds what the tests of several packages need from
// the translator beyond its API: the profiles of decoded items in one call,
// and the number of Sentry samples any pdata profiles hold.
package profilestest // import "github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"

import (
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator"
)

// ToProfiles converts items into one pprofile.Profiles, as a
// ProfilesBuilder that adds them in order.
func ToProfiles(items []translator.DecodedProfile, opts translator.ReceiveOptions) pprofile.Profiles {
	b := translator.NewProfilesBuilder(opts)
	for _, it := range items {
		b.Add(it)
	}
	return b.Profiles()
}

// SampleEvents counts the observations pd holds, the way Sentry counts
// samples: one per timestamp, and for an aggregated sample (no timestamps)
// the sum of its positive values. For profiles built by ProfilesBuilder it
// is the number of Sentry samples they came from.
func SampleEvents(pd pprofile.Profiles) int {
	n := 0
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				for _, s := range prof.Samples().All() {
					n += sampleEvents(s)
				}
			}
		}
	}
	return n
}

// sampleEvents counts the observations of one Sample, as SampleEvents does.
func sampleEvents(s pprofile.Sample) int {
	if ts := s.TimestampsUnixNano().Len(); ts > 0 {
		return ts
	}
	n := 0
	for _, v := range s.Values().All() {
		n += int(max(v, 0))
	}
	return n
}

// Package samplecount counts the Sentry samples an OTLP profile holds. The
// tests of the translator (which cannot import a package that imports it)
// and of everything built on it share it.
package samplecount // import "github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"

import "go.opentelemetry.io/collector/pdata/pprofile"

// Events counts the observations pd holds, the way Sentry counts samples:
// one per timestamp, and for an aggregated sample (no timestamps) the sum
// of its positive values. For profiles built by profilesin.ProfilesBuilder
// it is the number of Sentry samples they came from.
func Events(pd pprofile.Profiles) int {
	n := 0
	for _, rp := range pd.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				for _, s := range prof.Samples().All() {
					n += OfSample(s)
				}
			}
		}
	}
	return n
}

// OfSample counts the observations of one Sample, as Events does.
func OfSample(s pprofile.Sample) int {
	if ts := s.TimestampsUnixNano().Len(); ts > 0 {
		return ts
	}
	n := 0
	for _, v := range s.Values().All() {
		n += int(max(v, 0))
	}
	return n
}

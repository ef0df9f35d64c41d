// Package profilestest holds what the tests of several packages need from
// the translator beyond its API: the profiles of decoded items in one call,
// and the number of Sentry samples any pdata profiles hold.
package profilestest // import "github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"

import (
	"github.com/sentryprofile/otelcol-sentryprofile/internal/samplecount"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
)

// ToProfiles converts items into one pprofile.Profiles, as a
// ProfilesBuilder that adds them in order.
func ToProfiles(items []profilesin.DecodedProfile, opts profilesin.ReceiveOptions) pprofile.Profiles {
	b := profilesin.NewProfilesBuilder(opts)
	for _, it := range items {
		b.Add(it)
	}
	return b.Profiles()
}

// SampleEvents counts the Sentry samples pd holds (samplecount.Events).
func SampleEvents(pd pprofile.Profiles) int { return samplecount.Events(pd) }

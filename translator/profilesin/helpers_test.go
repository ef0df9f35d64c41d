package profilesin

import "go.opentelemetry.io/collector/pdata/pprofile"

// toProfiles converts items into one pprofile.Profiles, as a
// ProfilesBuilder that adds them in order.
func toProfiles(items []DecodedProfile, opts ReceiveOptions) pprofile.Profiles {
	b := NewProfilesBuilder(opts)
	for _, it := range items {
		b.Add(it)
	}
	return b.Profiles()
}

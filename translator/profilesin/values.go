package profilesin

// The values the object files (resource.go, thread.go, frame.go, image.go,
// measurements.go, transaction.go) hand the walk: they read a
// sentry.Profile and return these; the walk puts them in the dictionary.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// isV2: "version" "2" is a V2 chunk; anything else was read as V1.
func isV2(p *sentry.Profile) bool { return p.Version == sentry.VersionV2 }

// stringAttr is a string attribute an object file maps; an empty value is
// left out.
type stringAttr struct{ key, value string }

// profileAttr is a profile attribute an object file maps; key "" when the
// profile has nothing for it.
type profileAttr struct {
	key   string
	value pcommon.Value
}

package profilesin

// Measurements: "measurements" ⇄ profile attribute sentry.measurements.

import (
	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// measurementsAttr: "measurements" → profile attribute
// sentry.measurements (map name → {unit, values: [{timestamp_unix_nano,
// value}]}). V1 "elapsed_since_start_ns" become absolute timestamps, like V2
// "timestamp" values, so that both come back the same way. Back:
// measurementsFromAttr.
func measurementsAttr(p *sentry.Profile, start uint64) profileAttr {
	if len(p.Measurements) == 0 {
		return profileAttr{}
	}
	v, m := profileschema.NewMapValue(len(p.Measurements))
	for _, ms := range p.Measurements {
		e := m.PutEmptyMap(ms.Name)
		profileschema.PutNonEmpty(e, profileschema.KeyUnit, ms.Unit) // "unit"
		values := e.PutEmptySlice(profileschema.KeyValues)           // "values"
		values.EnsureCapacity(len(ms.Values))
		for _, mv := range ms.Values {
			ts := mv.Timestamp
			if !isV2(p) {
				ts = int64(start + mv.ElapsedSinceStartNS)
			}
			pt := values.AppendEmpty().SetEmptyMap()
			pt.PutInt(profileschema.KeyTimestampNano, ts)
			pt.PutDouble(profileschema.KeyValue, mv.Value) // "value"
		}
	}
	return profileAttr{key: sentryattr.Measurements, value: v}
}

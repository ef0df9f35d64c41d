package profilesout

// Measurements: "measurements" ⇄ profile attribute sentry.measurements.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// measurementsFromAttr: profile attribute sentry.measurements →
// "measurements" (name → "unit", "values"[]: timestamp_unix_nano →
// "timestamp", "value"), keeping the values timed in [from, to]: a
// profile cut into several chunks sends each value once.
func measurementsFromAttr(m pcommon.Map, from, to int64) []sentry.Measurement {
	var out []sentry.Measurement
	for name, v := range m.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		ms := sentry.Measurement{Name: name, Unit: profileschema.MapStr(v.Map(), profileschema.KeyUnit)}
		if values, ok := v.Map().Get(profileschema.KeyValues); ok && values.Type() == pcommon.ValueTypeSlice {
			for _, pt := range values.Slice().All() {
				if pt.Type() != pcommon.ValueTypeMap {
					continue
				}
				var mv sentry.MeasurementValue
				if ts, ok := pt.Map().Get(profileschema.KeyTimestampNano); ok && ts.Type() == pcommon.ValueTypeInt {
					mv.Timestamp = ts.Int()
				}
				if val, ok := pt.Map().Get(profileschema.KeyValue); ok && val.Type() == pcommon.ValueTypeDouble {
					mv.Value = val.Double()
				}
				if mv.Timestamp < from || mv.Timestamp > to {
					continue
				}
				ms.Values = append(ms.Values, mv)
			}
		}
		out = append(out, ms)
	}
	return out
}

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
			ms.Values = measurementValues(values.Slice(), from, to)
		}
		out = append(out, ms)
	}
	return out
}

// measurementValues: "values"[] of one measurement (timestamp_unix_nano
// → "timestamp", "value"), those timed in [from, to].
func measurementValues(values pcommon.Slice, from, to int64) []sentry.MeasurementValue {
	var out []sentry.MeasurementValue
	for _, pt := range values.All() {
		if pt.Type() != pcommon.ValueTypeMap {
			continue
		}
		mv := sentry.MeasurementValue{
			Timestamp: mapInt(pt.Map(), profileschema.KeyTimestampNano),
			Value:     mapDouble(pt.Map(), profileschema.KeyValue),
		}
		if mv.Timestamp >= from && mv.Timestamp <= to {
			out = append(out, mv)
		}
	}
	return out
}

// mapInt is the integer value of k in m; 0 when it is absent or not an
// integer.
func mapInt(m pcommon.Map, k string) int64 {
	if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeInt {
		return v.Int()
	}
	return 0
}

// mapDouble is the double value of k in m; 0 when it is absent or not a
// double.
func mapDouble(m pcommon.Map, k string) float64 {
	if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeDouble {
		return v.Double()
	}
	return 0
}

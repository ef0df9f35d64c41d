package translator

// Measurements: "measurements" ⇄ profile attribute sentry.measurements.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

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
	v, m := newMapValue(len(p.Measurements))
	for _, ms := range p.Measurements {
		e := m.PutEmptyMap(ms.Name)
		putNonEmpty(e, keyUnit, ms.Unit)     // "unit"
		values := e.PutEmptySlice(keyValues) // "values"
		values.EnsureCapacity(len(ms.Values))
		for _, mv := range ms.Values {
			ts := mv.Timestamp
			if !isV2(p) {
				ts = int64(start + mv.ElapsedSinceStartNS)
			}
			pt := values.AppendEmpty().SetEmptyMap()
			pt.PutInt(keyTimestampNano, ts)
			pt.PutDouble(keyValue, mv.Value) // "value"
		}
	}
	return profileAttr{key: attrMeasurements, value: v}
}

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
		ms := sentry.Measurement{Name: name, Unit: mapStr(v.Map(), keyUnit)}
		if values, ok := v.Map().Get(keyValues); ok && values.Type() == pcommon.ValueTypeSlice {
			for _, pt := range values.Slice().All() {
				if pt.Type() != pcommon.ValueTypeMap {
					continue
				}
				var mv sentry.MeasurementValue
				if ts, ok := pt.Map().Get(keyTimestampNano); ok && ts.Type() == pcommon.ValueTypeInt {
					mv.Timestamp = ts.Int()
				}
				if val, ok := pt.Map().Get(keyValue); ok && val.Type() == pcommon.ValueTypeDouble {
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

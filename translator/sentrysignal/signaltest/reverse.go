package signaltest

// The reverse of the signal translators' mappings, for the round-trip tests:
// OTLP values read back into the JSON a Sentry SDK sent. The exporter does
// not send these items back to Sentry, so only tests need them.

import (
	"encoding/json"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// Seconds writes a timestamp back as Sentry's float seconds text with
// microsecond precision at least, trailing zeros trimmed.
func Seconds(ts pcommon.Timestamp) json.Number {
	ns := int64(ts)
	s := strconv.FormatInt(ns/1e9, 10)
	if frac := ns % 1e9; frac != 0 {
		f := strconv.FormatInt(frac+1e9, 10)[1:]
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	return json.Number(s)
}

// TypedAttribute is the inverse of the typed-attribute mapping
// (sentrysignal.Limiter.PutTyped) for one value: Sentry's type name and the
// JSON value.
func TypedAttribute(v pcommon.Value) (typ string, value any) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return sentrysignal.TypeString, v.Str()
	case pcommon.ValueTypeBool:
		return sentrysignal.TypeBoolean, v.Bool()
	case pcommon.ValueTypeInt:
		return sentrysignal.TypeInteger, v.Int()
	case pcommon.ValueTypeDouble:
		return sentrysignal.TypeDouble, v.Double()
	}
	return sentrysignal.TypeArray, ToAny(v)
}

// ToAny is the inverse of the free-form JSON mapping
// (sentrysignal.Limiter.SetAny): the JSON value a pcommon value was mapped
// from (maps as map[string]any, Int as int64, Double as float64, the empty
// value as nil). Values kept as JSON text below the depth limit come back
// as strings.
func ToAny(v pcommon.Value) any {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeBool:
		return v.Bool()
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return v.Double()
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		out := make([]any, s.Len())
		for i := range out {
			out[i] = ToAny(s.At(i))
		}
		return out
	case pcommon.ValueTypeMap:
		out := make(map[string]any, v.Map().Len())
		for k, e := range v.Map().All() {
			out[k] = ToAny(e)
		}
		return out
	case pcommon.ValueTypeBytes:
		return v.Bytes().AsRaw()
	}
	return nil
}

package sentrymetric

// Sentry's unit names (its MeasurementUnit) and their UCUM symbols, which
// OTLP's Metric.unit takes. The table is one to one so that the Sentry unit
// can be read back; units it does not name are kept as sent.
var ucumOf = map[string]string{
	"nanosecond": "ns", "microsecond": "us", "millisecond": "ms", "second": "s",
	"minute": "min", "hour": "h", "day": "d", "week": "wk",
	"bit": "bit", "byte": "By",
	"kilobyte": "kBy", "kibibyte": "KiBy", "megabyte": "MBy", "mebibyte": "MiBy",
	"gigabyte": "GBy", "gibibyte": "GiBy", "terabyte": "TBy", "tebibyte": "TiBy",
	"petabyte": "PBy", "pebibyte": "PiBy", "exabyte": "EBy", "exbibyte": "EiBy",
	"percent": "%", "ratio": "{ratio}", "none": "1",
}

var sentryUnitOf = func() map[string]string {
	m := make(map[string]string, len(ucumOf))
	for s, u := range ucumOf {
		m[u] = s
	}
	return m
}()

// UCUM returns the OTLP unit of a Sentry unit.
func UCUM(unit string) string {
	if u, ok := ucumOf[unit]; ok {
		return u
	}
	return unit
}

// SentryUnit is UCUM's inverse.
func SentryUnit(unit string) string {
	if s, ok := sentryUnitOf[unit]; ok {
		return s
	}
	return unit
}

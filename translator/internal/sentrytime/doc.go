// Package sentrytime reads Sentry's timestamps, the one definition every
// model of the translator uses (profiles, transactions and spans, the other
// signals, Android traces): the same text is the same instant wherever an
// SDK writes it, and a profile and its transaction are timed alike.
//
// A Sentry timestamp is either seconds since the Unix epoch as decimal text
// (a JSON number, or that number quoted, which some SDKs write) or an RFC
// 3339 date-time string. Seconds are read from their decimal digits, never
// through float64, so the microseconds SDKs write and any nanoseconds
// survive; digits beyond the ninth fractional one are truncated toward
// zero, as Relay truncates the fraction it reads.
//
// # The range
//
// A timestamp is held as Unix nanoseconds in an int64: from
// 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z. A value
// outside that range is refused with ErrOutOfRange, never clamped or
// wrapped. That is Relay's rule for the same fields: its protocol Timestamp
// refuses a value it cannot represent or past the year 9999 ("timestamp out
// of range") and removes it, and a transaction without its timestamps is
// refused. The bound here is the narrower one of what OTLP and pprofile can
// hold; a consumer that holds only instants after the epoch (OTLP's
// unsigned timestamps) refuses earlier ones itself. NaN, infinities, signs
// other than a leading '-' and any other text are refused with ErrSyntax.
// Parsing costs time linear in the text and allocates nothing for the
// number forms.
package sentrytime // import "github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"

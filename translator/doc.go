// Package translator is the home of the conversions between Sentry and
// OpenTelemetry data; each lives in its own package, one direction or job
// per package:
//
//   - itemrules: the envelope's profile items, by the rules the receiver and
//     sentryprof share (which items are profiles, how each decodes, Relay's
//     one-profile-per-transaction rule, the transaction a V1 profile links to).
//   - profilesin: Sentry profiles → pprofile.Profiles (ProfilesBuilder).
//   - profilesout: pprofile.Profiles → Sentry V2 chunks (FromProfiles).
//   - android: Android's payloads (ART method traces, Perfetto chunks,
//     React Native JS profiles) → a Sentry profile.
//   - traceitems: Sentry spans → ptrace.Traces, and the span index's view of
//     a span.
//   - the other signals: sentryevent, sentrylog, sentrymetric,
//     sentrysession, sentrycheckin, sentryfeedback, sentryclientreport; and
//     back: otelevent, stacktrace.
//
// The resource every signal of an envelope shares is
// sentryresource.Resource. This package holds no code: its tests check
// what crosses the packages (the envelope's one resource, the README's
// mapping tables), and README.md beside this file is the field-by-field
// mapping of the profile packages, naming the file of each part.
package translator

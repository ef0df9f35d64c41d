// Package translator converts between Sentry profiles and OpenTelemetry
// profiles (pdata pprofile).
//
// Sentry → pdata: a ProfilesBuilder turns validated V1 `profile` and V2
// `profile_chunk` items into pprofile.Profiles, one Profile per item, all
// sharing one dictionary built with hash maps.
//
// pdata → Sentry: FromProfiles turns any pprofile.Profiles into V2 chunks that
// pass sentry.Validate, and reports what it had to drop.
//
// README.md beside this file is the field-by-field mapping of both
// directions; the attribute keys the mapping uses are declared in
// attributes.go.
package translator

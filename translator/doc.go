// Package translator converts between Sentry profiles and OpenTelemetry
// profiles (pdata pprofile).
//
// Sentry → pdata: a ProfilesBuilder turns validated V1 `profile` and V2
// `profile_chunk` items into pprofile.Profiles, one Profile per item, all
// sharing one dictionary built with hash maps. ItemDecoder and
// ItemDecoder.ProfileItems read an envelope's profile items by the rules the
// receiver and sentryprof share.
//
// pdata → Sentry: FromProfiles turns any pprofile.Profiles into V2 chunks that
// pass sentry.Validate, and reports what it had to drop.
//
// The files are cut by Sentry object, each holding both directions:
// resource.go (top-level fields and ids), thread.go (threads and queues),
// frame.go (frames and stacks), image.go (debug images), measurements.go,
// transaction.go (transactions and sample links), platform.go; keys.go holds
// the attribute keys, ids.go the id and address helpers. receive.go and
// export*.go are the walks that call them. README.md beside this file is the
// field-by-field mapping of both directions and names the file of each part.
package translator

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
// The mapping is cut by Sentry object, each file holding both directions:
// resource.go (top-level fields and ids), thread.go (threads and queues),
// frame.go (frames), image.go (debug images), measurements.go,
// transaction.go (transactions and sample links), platform.go; keys.go holds
// the attribute keys, ids.go the id and address helpers. Their functions
// take and return values. The walks hold the state and call them:
// receive.go and receive_tables.go (with dictionary.go) build pdata,
// export*.go build chunks. README.md beside this file is the field-by-field
// mapping of both directions and names the file of each part.
package translator

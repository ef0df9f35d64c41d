// Package profilesout turns any OpenTelemetry profiles back into Sentry V2
// `profile_chunk` items: FromProfiles (or EachChunk) groups the profiles of
// one profiler, orders their samples, cuts them into chunks that pass
// sentry.Validate within Relay's size limits, and reports what it had to
// drop.
//
// The walk (export.go, export_group.go, export_sort.go, export_chunk.go,
// bounded by export_limits.go) reads the pdata dictionary through
// internal/pprofdict and calls one file per Sentry object, the way back of
// profilesin's: resource.go ("platform", "release", "environment", "dist",
// "profiler_id", "chunk_id"), thread.go ("thread_id", "thread_metadata",
// "queue_metadata"), frame.go ("frames"), image.go ("debug_meta"."images"),
// measurements.go ("measurements") and platform.go (the chunk's "platform"
// for sources without one). roles.go is the attribute key → role table the
// walk reads samples and locations with.
package profilesout

// Package profilesin turns Sentry profiles into OpenTelemetry profiles: a
// ProfilesBuilder adds validated V1 `profile` and V2 `profile_chunk` items
// (a *sentry.Profile each, with what the envelope gives it: DecodedProfile)
// to one pprofile.Profiles, one Profile per item, all sharing one
// dictionary. The dictionary finds the strings, functions, locations,
// attributes and stacks it made by a seeded hash of their whole content in
// an open-addressed index of table positions (hashindex.go), so that no
// entry is written twice and a client's input costs linear work however
// alike its frames are.
//
// The walk (receive.go, receive_tables.go, receive_idle.go, dictionary.go)
// holds the state and calls one file per Sentry object, each mapping its
// fields and returning values: resource.go ("release", "environment",
// "dist", "platform", "profiler_id", "chunk_id", "event_id"), thread.go
// ("thread_id", "thread_metadata", "queue_metadata"), frame.go ("frames"),
// image.go ("debug_meta"."images"), measurements.go ("measurements") and
// transaction.go ("transaction", "transactions", the sample links). A V2
// chunk links to the spans a SpanSource knows (ChunkSpans): the receiver
// adapts its span index to it; this package keeps no spans.
//
// A large chunk's cost is its samples: the builder reads the Sentry
// samples once for their threads, stacks and times (resolveThreads),
// groups them from those arrays, and writes one pprofile Sample per
// Sentry sample, whose four allocations pdata's API makes unavoidable.
package profilesin

// Package itemrules reads the profile items of an envelope by the one set
// of rules the receiver and sentryprof share: which item types hold a
// profile ("profile", "profile_chunk", "profile_chunk_ui"), how each is
// decoded (sample format, Android ART trace, Perfetto chunk; its size
// limit, Relay's normalization and checks), Relay's one V1 profile per
// envelope, the time a profile without a "timestamp" starts at (the
// envelope's "sent_at"), and the "transaction" item a V1 profile links to.
package itemrules

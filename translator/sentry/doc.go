// Package sentry is the Sentry profiling format: the types of the V1 `profile`
// and V2 `profile_chunk` payloads (Sentry profiles spec 2.5.0), a decoder that
// accepts what real SDKs send, the validation rules Relay applies, and a
// deterministic writer for V2 chunks. A Decoder decodes one payload after
// another in the same memory, as a receiver's worker does.
//
// Samples and stacks are most of a payload and are read by fast paths for
// the compact shape SDKs write (decode_samples.go), backed by the general
// scanner for everything else. Their numbers are read eight bytes at a
// time (decode_digits.go, translator/internal/swar): a stack's frame
// indices through a bitmap of where each ends, 64 bytes at a time; a
// sample's timestamp by sentrytime.Scan, which reads the shape every SDK
// writes in two word reads.
//
// The package knows nothing about OpenTelemetry; the conversions live in the
// parent package translator.
package sentry

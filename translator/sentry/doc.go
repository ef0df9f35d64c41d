// Package sentry is the Sentry profiling format: the types of the V1 `profile`
// and V2 `profile_chunk` payloads (Sentry profiles spec 2.5.0), a decoder that
// accepts what real SDKs send, the validation rules Relay applies, and a
// deterministic writer for V2 chunks. A Decoder decodes one payload after
// another in the same memory, as a receiver's worker does.
//
// The package knows nothing about OpenTelemetry; the conversions live in the
// parent package translator.
package sentry

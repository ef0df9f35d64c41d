// Package android reads what Sentry's Android and React Native SDKs send
// instead of a sample-format profile, into a *sentry.Profile that
// profilesin converts like any other: a legacy Android payload with an ART
// method trace ("sampled_profile", base64, with its "transactions",
// "measurements", "debug_meta" and a React Native "js_profile"), a bare ART
// trace file (DecodeARTTrace), and a Perfetto chunk (JSON metadata, then a
// binary trace: DecodePerfettoChunk). The binary formats themselves are
// translator/art and translator/perfetto.
package android

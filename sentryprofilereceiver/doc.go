//go:generate go tool mdatagen metadata.yaml

// Package sentryprofilereceiver is a drop-in Sentry ingestion endpoint for
// profiles: a Sentry SDK whose DSN points at the collector posts its
// envelopes here, and the `profile` and `profile_chunk` items they carry
// leave the receiver as OTLP profiles. The SDK is answered exactly as Sentry
// would answer it, so it neither retries what was accepted nor keeps sending
// while the pipeline pushes back. Transaction and span items leave as
// traces when a traces pipeline names the receiver.
//
// The handler reads an envelope and hands it to the router, whose table
// (router.go) sends each item type to its translator and pipeline;
// forwarding to an upstream Sentry (internal/forward) and holding chunks for
// their spans (internal/linkhold) are parts of their own. ARCHITECTURE.md at
// the repository root draws the whole path.
package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

//go:generate go tool mdatagen metadata.yaml

// Package sentryprofilereceiver is a drop-in Sentry ingestion endpoint for
// profiles: a Sentry SDK whose DSN points at the collector posts its
// envelopes here, and the `profile` and `profile_chunk` items they carry
// leave the receiver as OTLP profiles. The SDK is answered exactly as Sentry
// would answer it, so it neither retries what was accepted nor keeps sending
// while the pipeline pushes back.
package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

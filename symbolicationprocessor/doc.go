//go:generate go tool mdatagen metadata.yaml

// Package symbolicationprocessor makes the frames of production builds
// readable in OTLP profiles and in the error records of Sentry events in
// logs (whose grouping key it sets after): minified JavaScript through
// source maps, ProGuard/R8-obfuscated JVM frames through their mappings and
// native addresses through debug files, after any profiles source (the
// sentryprofile receiver, the OpenTelemetry eBPF profiler, OTLP). The
// resolving itself lives in the symbolication packages, shared with other
// signals; this package reads frames out of the profiles dictionary and
// the error records and writes the answers back.
package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

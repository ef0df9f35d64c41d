// Package e2e holds the end-to-end tests of the distribution. They drive real
// programs and so are opt-in, and `go test ./...` skips them in milliseconds:
//
//   - TestCollector* start the collector binary that `make build` produces
//     (its path in OTELCOL_BIN): a smoke test that posts envelopes to the
//     configuration `make run` uses, `validate` on every configuration, and
//     each example run between a fake Sentry and a fake OTLP backend.
//     TestSentryprofPprof reads sentryprof's pprof output with `go tool
//     pprof` (SENTRYPROF_BIN). `make smoke` runs them all.
//   - TestNodeSDK (E2E=1) installs the real Sentry Node SDK from npm, runs the
//     CPU-busy program in node/ with continuous profiling, and compares what
//     the SDK sent with what came out of the receiver, in-process and in the
//     built collector. `make e2e` runs it.
//
// The package has no code outside its tests; this file only documents it.
package e2e

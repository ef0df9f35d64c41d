// Command sentryprof converts captured Sentry profiles into OpenTelemetry
// profiles (OTLP protobuf or JSON) and pprof, and OTLP profiles back into
// Sentry V2 profile chunks. It runs the same translator the collector
// components use, so it doubles as a way to inspect what they would produce.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// An empty stand-in: contrib's fileexporter imports this module only from its
// tests, but ocb's `go mod tidy` must still resolve it. See ../README.md.
module github.com/open-telemetry/opentelemetry-collector-contrib/extension/encoding/otlpencodingextension

go 1.26.0

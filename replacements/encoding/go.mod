// An empty stand-in: reached only through otlpencodingextension, which
// contrib's fileexporter imports from its tests. See ../README.md.
module github.com/open-telemetry/opentelemetry-collector-contrib/extension/encoding

go 1.26.0

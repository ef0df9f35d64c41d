// Package encoding is an empty stand-in for the contrib module of the same
// path. Nothing in the collector distribution built here imports it; it exists
// only so that `go mod tidy` of the generated distribution can resolve the
// test-only dependency chain fileexporter → otlpencodingextension → encoding
// when the module proxy refuses the real source archive.
package encoding

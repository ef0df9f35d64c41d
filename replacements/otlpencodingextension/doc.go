// Package otlpencodingextension is an empty stand-in for the contrib module of
// the same path. The collector distribution in this repository never links it:
// contrib's fileexporter imports the real one only from its test files, yet
// `go mod tidy` in the generated distribution has to resolve it, and the module
// proxy this project builds against refuses its source archive.
package otlpencodingextension

// Package sourcemap resolves positions in minified JavaScript to their
// original function, file, line and column with source maps (ECMA-426,
// version 3), and finds the map of a bundle by its debug id or its URL.
//
// The decoder is this package's own rather than a library's: resolving a
// profiler's frame needs the segments around a position (the name token
// before a function's parameter list, segments on other lines at the same
// column for Node's caller-line frames), which the libraries' lookup APIs do
// not expose; github.com/go-sourcemap/sourcemap, for one, answers with the
// last segment of an earlier line when a line has none at or before the
// column, and hides generated positions. BenchmarkParse measures the two
// side by side.
package sourcemap

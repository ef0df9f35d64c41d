// Package benchmarks is the official performance suite of issue 7: every
// hot path of the receiver and the exporter measured in one `go test -bench`
// run next to an encoding/json reference, so that the ratios hold on a
// shared, noisy machine. It has no code of its own; BENCHMARKS.md records
// the numbers and what was tried to reach them.
//
// Naming follows internal/benchtable: in each top-level benchmark the
// sub-benchmark whose name contains "EncodingJSON" is the reference the
// others are compared with.
package benchmarks

// Package reliability holds the project's adversarial, fault and load tests:
// the hostile input table run against the sentryprofile receiver over real
// HTTP, the receiver's HTTP fuzz target, the security checks, and the load and
// exporter fault tests that drive the built collector (gated behind LOAD=1).
//
// The package has no production code; README.md describes the campaign and
// records its results.
package reliability

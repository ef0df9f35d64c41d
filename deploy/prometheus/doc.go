// Package prometheus holds the operators' alerting and recording rules
// (rules.yaml) for the distribution and their tests; it has no code
// outside them. The Grafana dashboard in ../grafana draws the same
// recorded series and is tested here too.
//
// The tests, from the cheapest:
//   - the rules, the dashboard and the manifests agree (Go only): every
//     alert judges a recorded series, every recorded series has a panel,
//     every panel queries a recorded series, the thresholds tied to a
//     deployment are those of ../kubernetes, the receiver's and exporter's
//     metric names are those of their documentation.md;
//   - `promtool check rules` and `promtool test rules` (Debian's
//     `prometheus` package): every alert fires on the series it is for
//     and stays silent on the others;
//   - given the built collector (OTELCOL_BIN), a real Prometheus scrapes
//     it every second while real SDK envelopes and crafted bad ones are
//     replayed into it, with a forward upstream that fails and then
//     recovers and Sentry stand-ins that reject and rate limit: every
//     rule's expression and every panel's query returns data through the
//     HTTP API, and the alerts that should fire do (`for:` shortened in a
//     copy of the rules).
//
// Without promtool, prometheus or OTELCOL_BIN the tests that need them
// skip and say why; REQUIRE_TOOLS=1 makes them fail instead.
package prometheus

// Package sentrysession maps Sentry release health — "session" items (one
// session's update) and "sessions" items (pre-aggregated counts per
// minute) — to OTLP metrics: sessions started, ended by status, errored,
// and the duration of ended sessions, each by release and environment.
// README.md names the metrics and holds the mapping table.
package sentrysession

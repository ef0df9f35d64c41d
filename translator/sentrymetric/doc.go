// Package sentrymetric maps Sentry Metrics to OTLP metrics:
// "trace_metric" envelope items (counters, gauges and distributions, each
// with its unit, typed attributes and trace context) and the legacy
// "statsd" items of older SDKs (pre-aggregated buckets). README.md holds
// the mapping tables and why each Sentry type becomes the OTLP type it
// does.
package sentrymetric

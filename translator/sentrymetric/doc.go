// Package sentrymetric maps Sentry Metrics ("trace_metric" envelope items:
// counters, gauges and distributions, each with its unit, typed attributes
// and trace context) to OTLP metrics. README.md holds the mapping table
// and why each Sentry type becomes the OTLP type it does.
package sentrymetric

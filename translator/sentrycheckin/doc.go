// Package sentrycheckin maps Sentry cron monitor check-ins ("check_in"
// envelope items) to OTLP log records, one per check-in. README.md holds
// the mapping table and why logs rather than metrics.
package sentrycheckin

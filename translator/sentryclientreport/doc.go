// Package sentryclientreport decodes Sentry client reports
// ("client_report" envelope items): what an SDK says it discarded, by
// outcome, reason and data category. It produces typed counts; the
// receiver turns them into its own telemetry.
package sentryclientreport

package sentrysession

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// The tests decode and append in one call, as the receiver once did; the
// receiver now decodes first, to read the payload's resource too.

// AppendSession appends the metric points of one "session" item to dst
// and returns their number: a started session counts in
// sentry.sessions.started; an ended one in sentry.sessions.ended, in
// sentry.sessions.errored when it had an error, its error count in
// sentry.session.errors and its duration in sentry.session.duration. An update of a running session ("ok", not
// "init") appends nothing. On error nothing is appended.
func AppendSession(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice) (int, error) {
	u, err := DecodeUpdate(payload, opts)
	if err != nil {
		return 0, err
	}
	return u.AppendMetrics(dst), nil
}

// AppendSessions appends the metric points of a "sessions" item and
// returns their number, with AggregateMetrics's error.
func AppendSessions(payload []byte, opts sentrysignal.Options, dst pmetric.MetricSlice) (int, error) {
	metrics, err := AggregateMetrics(payload, opts)
	if metrics.Append == nil {
		return 0, err
	}
	return metrics.Append(dst), err
}

package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

// Client reports: what SDKs say they discarded before sending, counted in
// the receiver's own telemetry (receiver_sentryprofile_sdk_discarded), an
// operator's view of the loss before the collector.

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryclientreport"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// knownDiscardReasons are the reasons Sentry's SDKs and Relay publish for
// a client report's counts. Reasons and categories are chosen by the
// client: others are reported as "other" so that a client cannot grow the
// metric's cardinality.
var knownDiscardReasons = stringSet(
	"queue_overflow", "cache_overflow", "buffer_overflow", "ratelimit_backoff", "network_error",
	"sample_rate", "before_send", "event_processor", "send_error", "internal_sdk_error",
	"insufficient_data", "backpressure", "deadline_exceeded", "invalid", "too_large", "ignored",
)

// knownDiscardCategories are Sentry's data categories (rate-limit
// categories).
var knownDiscardCategories = stringSet(
	"default", "error", "transaction", "security", "attachment", "attachment_item", "session",
	"profile", "profile_chunk", "profile_chunk_ui", "profile_duration", "profile_duration_ui",
	"replay", "span", "span_indexed", "transaction_indexed", "log_item", "log_byte",
	"trace_metric", "metric_bucket", "monitor", "monitor_seat", "feedback", "user_report_v2",
	"internal", "unknown",
)

func stringSet(values ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(values))
	for _, v := range values {
		m[v] = struct{}{}
	}
	return m
}

func boundedValue(known map[string]struct{}, v string) string {
	if _, ok := known[v]; ok {
		return v
	}
	return "other"
}

// countClientReport adds a client_report item's counts to
// receiver_sentryprofile_sdk_discarded; an unreadable report is dropped
// whole (a wrong count is worse than none) and counted as a bad item.
func (rt *router) countClientReport(ctx context.Context, t *translation, projectID string, i int) {
	item := &t.items[i]
	if item.Oversized {
		rt.discardSignalItem(ctx, t, projectID, i, errOversizedSignalItem)
		return
	}
	report, err := sentryclientreport.Decode(item.Payload, sentrysignal.Options{})
	if err != nil {
		rt.discardSignalItem(ctx, t, projectID, i, err)
		return
	}
	for _, d := range report.Discards {
		if d.Quantity == 0 {
			continue
		}
		rt.telemetry.ReceiverSentryprofileSdkDiscarded.Add(ctx, d.Quantity, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("discard_reason", boundedValue(knownDiscardReasons, d.Reason)),
			attribute.String("discard_category", boundedValue(knownDiscardCategories, d.Category)))))
	}
}

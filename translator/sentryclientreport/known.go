package sentryclientreport

// The reasons and data categories a client report's counts can name.
// Both are chosen by the client, so a consumer that turns them into metric
// attributes (the receiver does) keeps the ones Sentry's SDKs and Relay
// publish and reports every other value as Other: a client cannot grow a
// metric's cardinality past these lists.
//
// Where the lists come from (read in the SDKs' and Relay's sources, August
// 2026 snapshots, and in the released packages the e2e suite runs):
//   - sentry-javascript: EventDropReason and DataCategory
//     (packages/core/src/types-hoist/clientreport.ts, datacategory.ts) in
//     8.55.2, 9.47.1, 10.63, and the published @sentry/core 10.75.3 and
//     11.1.0 (11.1.0 adds the reason callback_error; 10.x adds ignored,
//     invalid, no_parent_span and the category metric, which trace_metric
//     items count under).
//   - sentry-python: record_lost_event callers and EventDataCategory
//     (sentry_sdk/_types.py, transport.py, envelope.py) in 1.9.10 and 2.x.
//   - sentry-go: report/reason.go and internal/ratelimit/category.go
//     (v0.30.0 sends no client reports).
//   - sentry-java: io.sentry.clientreport.DiscardReason, io.sentry.DataCategory.
//   - sentry-cocoa: SentryDiscardReason, SentryDataCategory.
//   - sentry-dotnet: Sentry.Internal.DiscardReason.
//   - Relay: DataCategory::from_name (relay-base-schema), and the filter
//     keys (FilterStatKey) it writes in the filtered_events of the reports
//     it forwards.

// Other stands for every reason or category outside the lists.
const Other = "other"

// knownReasons are the discard reasons of the lists above.
var knownReasons = setOf(
	// The client reports spec and every SDK.
	"queue_overflow", "cache_overflow", "buffer_overflow", "ratelimit_backoff",
	"network_error", "send_error", "sample_rate", "before_send",
	"event_processor", "internal_sdk_error", "insufficient_data", "backpressure",
	// sentry-javascript 10.x and later.
	"ignored", "invalid", "no_parent_span",
	// sentry-javascript 11.x.
	"callback_error",
	// sentry-dotnet (earlier releases).
	"transaction_processor",
	// Kept from the receiver's earlier list.
	"deadline_exceeded", "too_large",
	// Relay's inbound filters (filtered_events of a report Relay forwards).
	"ip-address", "release-version", "error-message", "browser-extensions",
	"legacy-browsers", "localhost", "web-crawlers", "invalid-csp",
	"filtered-transaction", "denied-name", "disabled-namespace", "discarded",
	"custom-filter",
)

// knownCategories are the data categories of the lists above.
var knownCategories = setOf(
	// Relay's DataCategory names.
	"default", "error", "transaction", "security", "attachment", "session",
	"profile", "profile_indexed", "replay", "transaction_processed",
	"transaction_indexed", "monitor", "span", "log_item", "log_byte",
	"monitor_seat", "feedback", "user_report_v2", "metric_bucket",
	"span_indexed", "profile_duration", "profile_duration_ui", "profile_chunk",
	"profile_chunk_ui", "metric_second", "replay_video", "uptime",
	"attachment_item", "seer_autofix", "seer_scanner", "prevent_user",
	"prevent_review", "size_analysis", "installable_build", "trace_metric",
	"seer_user", "profile_backend", "profile_ui", "unknown",
	// SDK categories Relay has no name for: client reports themselves
	// (internal), sentry-javascript's metric, sentry-python's crash,
	// sentry-java's and sentry-cocoa's trace_metric_byte and user_report.
	"internal", "metric", "crash", "trace_metric_byte", "user_report",
)

func setOf(values ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(values))
	for _, v := range values {
		m[v] = struct{}{}
	}
	return m
}

// BoundedReason is reason when it is one Sentry's SDKs or Relay send,
// else Other.
func BoundedReason(reason string) string { return bounded(knownReasons, reason) }

// BoundedCategory is category when it is one of Sentry's data categories,
// else Other.
func BoundedCategory(category string) string { return bounded(knownCategories, category) }

func bounded(known map[string]struct{}, v string) string {
	if _, ok := known[v]; ok {
		return v
	}
	return Other
}

package sentryclientreport

import (
	"strings"
	"testing"
)

// What each SDK version the e2e suite runs can put in a client report, read
// in its sources at that version (see known.go): every reason and category
// must be kept as sent.
func TestBoundedKeepsWhatSDKsSend(t *testing.T) {
	js8 := sdkValues{
		reasons:    "before_send event_processor network_error queue_overflow ratelimit_backoff sample_rate send_error internal_sdk_error buffer_overflow",
		categories: "default error transaction replay security attachment session internal profile monitor feedback metric_bucket span log_item log_byte unknown",
	}
	js9 := sdkValues{
		reasons:    js8.reasons,
		categories: "default error transaction replay security attachment session internal profile monitor feedback span log_item log_byte unknown",
	}
	js10 := sdkValues{
		reasons:    js9.reasons + " ignored invalid no_parent_span",
		categories: js9.categories + " metric",
	}
	js11 := sdkValues{reasons: js10.reasons + " callback_error", categories: js10.categories}
	tests := []struct {
		sdk  string
		sent sdkValues
	}{
		{"@sentry/node 8.55.2", js8},
		{"@sentry/node 9.47.1", js9},
		{"@sentry/node 10.75.3, @sentry/browser 10.75.3", js10},
		{"@sentry/node 11.1.0, @sentry/browser 11.1.0", js11},
		// sentry-go v0.30.0 has no client reports (they came later).
		{"sentry-go v0.30.0", sdkValues{}},
		{"sentry-python 1.9.10", sdkValues{
			reasons:    "event_processor before_send sample_rate ratelimit_backoff queue_overflow network_error",
			categories: "default error crash transaction security attachment session internal profile",
		}},
		{"sentry-python 2.x", sdkValues{
			reasons:    "event_processor before_send sample_rate ratelimit_backoff queue_overflow network_error send_error internal_sdk_error insufficient_data backpressure buffer_overflow ignored",
			categories: "default error crash transaction security attachment session internal profile profile_chunk monitor span log_item log_byte trace_metric",
		}},
		{"sentry-java", sdkValues{
			reasons:    "queue_overflow cache_overflow ratelimit_backoff network_error send_error sample_rate before_send event_processor backpressure",
			categories: "default error feedback session attachment log_item log_byte trace_metric trace_metric_byte monitor profile profile_chunk_ui profile_chunk transaction replay span security user_report unknown",
		}},
		{"sentry-cocoa", sdkValues{
			reasons:    "before_send event_processor sample_rate network_error queue_overflow cache_overflow ratelimit_backoff insufficient_data send_error",
			categories: "default error session transaction attachment profile profile_chunk_ui replay metric_bucket span feedback log_item log_byte trace_metric trace_metric_byte unknown",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.sdk, func(t *testing.T) {
			for _, r := range strings.Fields(tt.sent.reasons) {
				if got := BoundedReason(r); got != r {
					t.Errorf("reason %q counted as %q", r, got)
				}
			}
			for _, c := range strings.Fields(tt.sent.categories) {
				if got := BoundedCategory(c); got != c {
					t.Errorf("category %q counted as %q", c, got)
				}
			}
		})
	}
}

type sdkValues struct{ reasons, categories string }

// Values no SDK sends stay one attribute value, whatever the client makes
// up.
func TestBoundedOther(t *testing.T) {
	for _, v := range []string{"", "other", "Sample_Rate", "sample_rate ", "no-parent-span", "Sampled:17", strings.Repeat("x", 1000)} {
		if got := BoundedReason(v); got != Other {
			t.Errorf("reason %q counted as %q", v, got)
		}
		if got := BoundedCategory(v); got != Other {
			t.Errorf("category %q counted as %q", v, got)
		}
	}
}

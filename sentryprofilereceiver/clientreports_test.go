package sentryprofilereceiver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
)

// TestClientReportReasonsOfTodaysSDKs: the counts today's SDKs report are
// counted under their own reason and category, not "other": the spans
// @sentry/node 11 drops for lack of a parent, the metrics whose callback
// failed, the spans an ignoreSpans option dropped.
func TestClientReportReasonsOfTodaysSDKs(t *testing.T) {
	tests := []struct {
		name, report     string
		reason, category string
		n                int64
	}{
		{"node 11 no_parent_span", `{"timestamp":1795644010.5,"discarded_events":[{"reason":"no_parent_span","category":"span","quantity":4}]}`, "no_parent_span", "span", 4},
		{"node 11 callback_error metric", `{"timestamp":1795644010.5,"discarded_events":[{"reason":"callback_error","category":"metric","quantity":2}]}`, "callback_error", "metric", 2},
		{"node 10 ignored span", `{"timestamp":1795644010.5,"discarded_events":[{"reason":"ignored","category":"span","quantity":7}]}`, "ignored", "span", 7},
		{"python 2 backpressure", `{"timestamp":1795644010.5,"discarded_events":[{"reason":"backpressure","category":"transaction","quantity":1}]}`, "backpressure", "transaction", 1},
		{"made up", `{"timestamp":1795644010.5,"discarded_events":[{"reason":"because","category":"everything","quantity":9}]}`, "other", "other", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := startSignals(t, signalSinks{logs: new(consumertest.LogsSink)}, nil)
			resp := post(t, tr, envelopeOf(eventHeader, item{`{"type":"client_report"}`, tt.report}), nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			metadatatest.AssertEqualReceiverSentryprofileSdkDiscarded(t, tr.telemetry, []metricdata.DataPoint[int64]{{
				Attributes: attribute.NewSet(attribute.String("discard_reason", tt.reason), attribute.String("discard_category", tt.category)),
				Value:      tt.n,
			}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
}

package sentryprofilereceiver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadatatest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// lenientV1Samples is the profile of a V1 payload: two threads, four samples.
const lenientV1Samples = `"profile":{"samples":[` +
	`{"stack_id":0,"thread_id":1,"elapsed_since_start_ns":0},{"stack_id":0,"thread_id":1,"elapsed_since_start_ns":10000000},` +
	`{"stack_id":1,"thread_id":"7","elapsed_since_start_ns":"0"},{"stack_id":1,"thread_id":"7","elapsed_since_start_ns":"10000000"}],` +
	`"stacks":[[0,1],[1]],"frames":[{"function":"main.work"},{"function":"main.main"}]}`

const v1Transaction = `"transaction":{"id":"41fed0925670468bb0457f61a74688ec","trace_id":"cb8c53a4e3e24c73a9ff8e5ba7e0ac3c","name":"GET /","active_thread_id":1}`

// v2Chunk returns a chunk whose two samples are span apart.
func v2Chunk(chunkID string, span time.Duration) string {
	first := 1795000000.0
	return fmt.Sprintf(`{"version":"2","platform":"node","profiler_id":"6f8a3bcd99384fa2ad64b79d1e3f5490","chunk_id":%q,`+
		`"client_sdk":{"name":"sentry.javascript.node","version":"11.1.0"},`+
		`"profile":{"samples":[{"stack_id":0,"thread_id":"0","timestamp":%.3f},{"stack_id":0,"thread_id":"0","timestamp":%.3f}],`+
		`"stacks":[[0]],"frames":[{"function":"work"}]}}`, chunkID, first, first+span.Seconds())
}

// TestValidationModes posts payloads that break Relay's metadata rules in
// the ways real SDKs do, under the default (lenient) validation and under
// validation: relay.
func TestValidationModes(t *testing.T) {
	const sentAt = "2026-11-24T12:00:00.5Z"
	tests := []struct {
		name    string
		header  string // item header
		payload string
		samples int
		warn    sentry.Reason // counted in lenient mode; what relay mode drops with. Empty: both accept, no warning
	}{
		{
			// sentry-go v0.30.0 writes its metadata structs whole.
			name:   "sentry-go empty strings",
			header: `{"type":"profile"}`,
			payload: `{"version":"1","event_id":"9ec79c33ec9942ab8353589fcb2e04dc","platform":"go","timestamp":"2026-11-24T11:59:59Z",` +
				`"device":{"architecture":"amd64","classification":"","locale":"","manufacturer":"","model":""},` +
				`"os":{"build_number":"","name":"linux","version":""},"runtime":{"name":"go","version":"go1.26"},` +
				v1Transaction + "," + lenientV1Samples + "}",
			samples: 4,
		},
		{
			name:    "V1 without device, os or timestamp",
			header:  `{"type":"profile"}`,
			payload: `{"version":"1","event_id":"9ec79c33ec9942ab8353589fcb2e04dc","platform":"javascript",` + v1Transaction + "," + lenientV1Samples + "}",
			samples: 4,
			warn:    sentry.ReasonMissingProfileMetadata,
		},
		{
			name:   "V1 event_id not a UUID",
			header: `{"type":"profile"}`,
			payload: `{"version":"1","event_id":"profile-1","platform":"go","timestamp":"2026-11-24T11:59:59Z",` +
				`"device":{"architecture":"amd64"},"os":{"name":"linux","version":"6"},` + v1Transaction + "," + lenientV1Samples + "}",
			samples: 4,
			warn:    sentry.ReasonInvalidJSON,
		},
		{
			name:   "V1 without transaction",
			header: `{"type":"profile"}`,
			payload: `{"version":"1","event_id":"9ec79c33ec9942ab8353589fcb2e04dc","platform":"go","timestamp":"2026-11-24T11:59:59Z",` +
				`"device":{"architecture":"amd64"},"os":{"name":"linux","version":"6"},` + lenientV1Samples + "}",
			samples: 4,
			warn:    sentry.ReasonNoTransactionAssociated,
		},
		{
			name:    "V2 longer than Relay's 66 s",
			header:  `{"type":"profile_chunk","platform":"node"}`,
			payload: v2Chunk("3851daeaf3714ff58bd0301b3eecac12", 90*time.Second),
			samples: 2,
			warn:    sentry.ReasonDurationIsTooLong,
		},
		{
			name:    "V2 chunk_id not a UUID",
			header:  `{"type":"profile_chunk","platform":"node"}`,
			payload: v2Chunk("chunk-1", time.Second),
			samples: 2,
			warn:    sentry.ReasonInvalidJSON,
		},
	}
	for _, tt := range tests {
		body := envelopeOf(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","sent_at":"`+sentAt+`"}`, item{header: tt.header, payload: tt.payload})
		t.Run(tt.name+"/lenient", func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, nil)
			resp := post(t, tr, body, nil)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			assert.Equal(t, tt.samples, sampleEvents(sink), "every sample arrives")
			_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_discarded_items")
			assert.Error(t, err, "nothing is discarded")
			if tt.warn == "" {
				_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_item_warnings")
				assert.Error(t, err, "no warning")
			} else {
				metadatatest.AssertEqualReceiverSentryprofileItemWarnings(t, tr.telemetry, []metricdata.DataPoint[int64]{{
					Attributes: attribute.NewSet(attribute.String("reason", string(tt.warn))), Value: 1,
				}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
			}
			if strings.Contains(tt.payload, `"version":"1"`) && !strings.Contains(tt.payload, `"timestamp"`) {
				// A V1 profile without timestamp is placed at the envelope's sent_at.
				prof := sink.AllProfiles()[0].ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
				want, err := time.Parse(time.RFC3339Nano, sentAt)
				require.NoError(t, err)
				assert.Equal(t, want.UnixNano(), int64(prof.Time()))
			}
		})
		t.Run(tt.name+"/relay", func(t *testing.T) {
			sink := new(consumertest.ProfilesSink)
			tr := startReceiver(t, sink, func(cfg *Config) { cfg.Validation = ValidationRelay })
			resp := post(t, tr, body, nil)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			if tt.warn == "" {
				assert.Equal(t, tt.samples, sampleEvents(sink))
				return
			}
			assert.Zero(t, sink.ProfileCount())
			metadatatest.AssertEqualReceiverSentryprofileDiscardedItems(t, tr.telemetry, []metricdata.DataPoint[int64]{{
				Attributes: attribute.NewSet(attribute.String("reason", string(tt.warn))), Value: 1,
			}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
}

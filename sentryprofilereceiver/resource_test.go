package sentryprofilereceiver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
)

// TestEnvelopeSignalsShareResource posts real envelopes that hold a profile
// and trace items to one endpoint serving both pipelines: every profile and
// every span of an envelope carries the same resource, with what each
// payload alone knows (the profile's os and device, the transaction's SDK).
func TestEnvelopeSignalsShareResource(t *testing.T) {
	tx := readTraceInput(t, "transaction_static.json")
	spans := readTraceInput(t, "spans_v2.json")
	tests := []struct {
		name string
		body []byte
		want map[string]any
	}{
		{
			name: "captured sentry-python V1 profile and transaction",
			body: fixtures.Read(t, "sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope"),
			want: map[string]any{"telemetry.sdk.name": "sentry.python.flask", "os.name": "Linux", "host.arch": "x86_64"},
		},
		{
			name: "V2 chunk, transaction and span container",
			body: envelopeOf(eventHeader, tx.item, chunkItem(chunkPayload), spans.item),
			want: map[string]any{"sentry.project.id": "42"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			profiles := new(consumertest.ProfilesSink)
			traces := new(consumertest.TracesSink)
			tr := startShared(t, profiles, traces)
			resp := post(t, &tr.testReceiver, tt.body, nil)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			require.Len(t, profiles.AllProfiles(), 1)
			require.Len(t, traces.AllTraces(), 1)

			pd, td := profiles.AllProfiles()[0], traces.AllTraces()[0]
			require.Positive(t, pd.ResourceProfiles().Len())
			require.Positive(t, td.ResourceSpans().Len())
			want := pd.ResourceProfiles().At(0).Resource().Attributes().AsRaw()
			for k, v := range tt.want {
				assert.Equal(t, v, want[k], k)
			}
			for i, rp := range pd.ResourceProfiles().All() {
				assert.Equal(t, want, rp.Resource().Attributes().AsRaw(), "profile %d", i)
			}
			for i, rs := range td.ResourceSpans().All() {
				assert.Equal(t, want, rs.Resource().Attributes().AsRaw(), "spans of item %d", i)
			}
		})
	}
}

package translator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestItemDecoder: the one set of item rules of the receiver and the CLI.
func TestItemDecoder(t *testing.T) {
	v1NoTimestamp := `{"version":"1","platform":"python","event_id":"41fed0925670468bb0457f61a74688ec",` +
		`"transaction":{"id":"30976f2ddbe04ac9b6bffe6e35d4710c","name":"t","trace_id":"4b25bc58f14243d8b208d1e22a054164","active_thread_id":"1"},` +
		`"device":{"architecture":"x86_64"},"os":{"name":"Linux","version":"6"},"runtime":{"name":"CPython","version":"3.11"},` +
		`"profile":{"samples":[{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"0"},{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"10"}],` +
		`"stacks":[[0]],"frames":[{"function":"f"}]}}`
	fallback := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		item       envelope.Item
		max        int64
		mode       sentry.Mode
		wantReason sentry.Reason
		check      func(t *testing.T, p *sentry.Profile)
	}{
		{name: "over the size limit", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"}, Payload: []byte("{}"), Size: 100},
			max: 10, wantReason: sentry.ReasonExceedSizeLimit},
		{name: "oversized while read", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"}, Oversized: true, Size: 1 << 30},
			wantReason: sentry.ReasonExceedSizeLimit},
		{name: "not JSON", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"}, Payload: []byte("{"), Size: 1},
			wantReason: sentry.ReasonInvalidJSON},
		{name: "a Perfetto chunk without meta_length", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile_chunk",
			ContentType: "application/x-perfetto-trace", Raw: []byte(`{"type":"profile_chunk"}`)}, Payload: []byte("{}"), Size: 2},
			wantReason: sentry.ReasonInvalidSampledProfile},
		{name: "an Android trace that is not base64", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"},
			Payload: []byte(`{"platform":"android","sampled_profile":"*not base64*"}`), Size: 50},
			wantReason: sentry.ReasonInvalidSampledProfile},
		{name: "a V1 profile without timestamp starts when it was sent", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"},
			Payload: []byte(v1NoTimestamp), Size: int64(len(v1NoTimestamp))},
			check: func(t *testing.T, p *sentry.Profile) { assert.Equal(t, fallback, p.Timestamp) }},
		{name: "relay mode refuses what Relay refuses", mode: sentry.ModeRelay, item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"},
			Payload: []byte(v1NoTimestamp), Size: int64(len(v1NoTimestamp))}, wantReason: sentry.ReasonMissingProfileMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ItemDecoder{Mode: tt.mode, MaxSize: tt.max}
			p, _, serr := d.Decode(&tt.item, fallback)
			if tt.wantReason != "" {
				require.NotNil(t, serr)
				assert.Equal(t, tt.wantReason, serr.Reason, serr.Error())
				return
			}
			require.Nil(t, serr)
			tt.check(t, p)
		})
	}
}

package sentryprofilereceiver

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// limitsTestTransaction is a transaction item's payload.
const limitsTestTransaction = `{"type":"transaction","event_id":"a2c6f3cc518c44719ee95a36f07cda36",` +
	`"transaction":"checkout","start_timestamp":1795000000.0,"timestamp":1795000001.0,` +
	`"contexts":{"trace":{"trace_id":"dd2619a66dba46f7939c718fdab394b6","span_id":"8a284e3cea10a0ea"}}}`

// TestItemSizeLimits covers every row of itemRoutes: an item of its type
// padded to exactly its limit is kept (it reaches its pipeline), one byte
// more refuses the whole envelope with 413 before it is answered, and
// nothing of that envelope reaches any pipeline. The limits are the ones
// README.md's Limits table states, with Relay's beside them.
func TestItemSizeLimits(t *testing.T) {
	const profileLimit = 256 << 10 // max_profile_item_size, small for the test
	tests := []struct {
		itemType string
		header   string // item header fields besides type and length
		payload  string
		want     int64 // the limit
		relay    int64 // Relay's limit for the type (relay-config Limits)
	}{
		{itemType: "profile", payload: v1Payload, want: profileLimit, relay: 50 << 20},
		{itemType: "profile_chunk", header: `"platform":"python",`, payload: chunkPayload, want: profileLimit, relay: 50 << 20},
		{itemType: "profile_chunk_ui", header: `"platform":"python",`, payload: chunkPayload, want: profileLimit, relay: 50 << 20},
		{itemType: "transaction", payload: limitsTestTransaction, want: 4 << 20, relay: 1 << 20},
		{itemType: "span", header: `"content_type":"application/vnd.sentry.items.span.v2+json","item_count":1,`,
			payload: linkSegmentStreamed, want: 12 << 20, relay: 12 << 20},
		{itemType: "event", payload: eventPayload, want: 4 << 20, relay: 1 << 20},
		{itemType: "log", payload: logPayload, want: 12 << 20, relay: 12 << 20},
		{itemType: "otel_log", payload: otelLogPayload, want: 4 << 20, relay: 0}, // not an item type of today's Relay
		{itemType: "check_in", payload: checkInPayload, want: 4 << 20, relay: 100 << 10},
		{itemType: "feedback", payload: feedbackPayload, want: 4 << 20, relay: 1 << 20},
		// Relay bounds user_report as an attachment (200 MiB); the
		// translator keeps 4 MiB of a form's name, email and comment.
		{itemType: "user_report", payload: userReportPayload, want: 4 << 20, relay: 200 << 20},
		{itemType: "trace_metric", payload: traceMetricPayload, want: 12 << 20, relay: 12 << 20},
		{itemType: "statsd", payload: statsdPayload, want: 4 << 20, relay: 1 << 20},
		{itemType: "session", payload: sessionPayload, want: 10 << 20, relay: 10 << 20},
		{itemType: "sessions", payload: sessionsPayload, want: 10 << 20, relay: 10 << 20},
		{itemType: "client_report", payload: clientReportPayload, want: 4 << 20, relay: 100 << 10},
	}
	tested := map[string]bool{}
	for _, tt := range tests {
		tested[tt.itemType] = true
		t.Run(tt.itemType, func(t *testing.T) {
			sinks := allSinks()
			tr := startSignals(t, sinks, func(c *Config) { c.MaxProfileItemSize = profileLimit })
			limit := tr.rcvr.router.itemLimit(tt.itemType)
			require.Equal(t, tt.want, limit)
			byDefault := limit
			if tt.want == profileLimit {
				byDefault = createDefaultConfig().(*Config).MaxProfileItemSize
			}
			if tt.itemType != "user_report" {
				assert.GreaterOrEqual(t, byDefault, tt.relay, "nothing Relay keeps is refused")
			}

			itemOf := func(size int64) item {
				require.GreaterOrEqual(t, size, int64(len(tt.payload)))
				// Trailing whitespace is JSON's (and a statsd line's) to
				// ignore: the item is as large as wanted and still valid.
				pad := " "
				if tt.itemType == "statsd" {
					pad = "\n"
				}
				return item{header: `{"type":"` + tt.itemType + `",` + tt.header + `"length":` + strconv.FormatInt(size, 10) + `}`,
					payload: tt.payload + strings.Repeat(pad, int(size)-len(tt.payload))}
			}

			resp := post(t, tr, envelopeOf(eventHeader, itemOf(limit)), nil)
			require.Equal(t, http.StatusOK, resp.status, "at the limit; body: %s", resp.body)
			assert.True(t, keptAny(t, tr, sinks, 0), "an item at its limit is kept")
			_, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_discarded_signal_items")
			assert.Error(t, err, "nothing dropped at the limit")

			sinks.reset()
			reported := sdkDiscardedTotal(t, tr)
			good := item{header: `{"type":"event"}`, payload: eventPayload}
			resp = post(t, tr, envelopeOf(eventHeader, good, itemOf(limit+1)), nil)
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.status, "one byte over; body: %s", resp.body)
			assert.Equal(t, tt.itemType+" item 1 exceeds "+strconv.FormatInt(limit, 10)+" bytes", resp.detail(t))
			assert.False(t, keptAny(t, tr, sinks, reported), "a refused envelope feeds no pipeline, not even its good items")
		})
	}
	for _, r := range itemRoutes {
		assert.True(t, tested[r.itemType], "row %q has no size test", r.itemType)
	}
}

// keptAny reports whether anything reached a pipeline, or the client
// report count grew past before.
func keptAny(t *testing.T, tr *testReceiver, s signalSinks, before int64) bool {
	t.Helper()
	n := s.profiles.ProfileCount() + s.traces.SpanCount() + s.logs.LogRecordCount() + s.metrics.DataPointCount()
	return n > 0 || sdkDiscardedTotal(t, tr) > before
}

// sdkDiscardedTotal is what client reports counted so far.
func sdkDiscardedTotal(t *testing.T, tr *testReceiver) int64 {
	t.Helper()
	m, err := tr.telemetry.GetMetric("otelcol_receiver_sentryprofile_sdk_discarded")
	if err != nil {
		return 0
	}
	var total int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		total += dp.Value
	}
	return total
}

func (s signalSinks) reset() {
	s.profiles.Reset()
	s.traces.Reset()
	s.logs.Reset()
	s.metrics.Reset()
}

// TestUnreadItemTypesHaveNoLimit: item types the receiver does not read
// (attachments, replays, unknown types) are bounded by the body only, as
// Relay bounds unknown types; they are counted as ignored, not refused.
func TestUnreadItemTypesHaveNoLimit(t *testing.T) {
	tr := startReceiver(t, nil, func(c *Config) { c.MaxProfileItemSize = 1 << 20 })
	big := strings.Repeat("a", 30<<20) // over every fixed limit and max_profile_item_size
	for _, typ := range []string{"attachment", "replay_recording", "x-made-up"} {
		resp := post(t, tr, envelopeOf(eventHeader, item{header: `{"type":"` + typ + `","length":` + strconv.Itoa(len(big)) + `}`, payload: big}), nil)
		assert.Equal(t, http.StatusOK, resp.status, "%s: %s", typ, resp.body)
	}
}

// TestStoreEventSizeLimit: a /store/ body is one event. Over the event
// limit it is refused with 413 before it is answered (main answered 200
// and dropped it); at the limit it reaches the logs pipeline.
func TestStoreEventSizeLimit(t *testing.T) {
	tests := []struct {
		name       string
		size       int
		wantStatus int
		wantKept   bool
	}{
		{name: "at the limit", size: maxEventItemBytes, wantStatus: http.StatusOK, wantKept: true},
		{name: "5 MB", size: 5_000_000, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "one byte over", size: maxEventItemBytes + 1, wantStatus: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sinks := allSinks()
			tr := startSignals(t, sinks, nil)
			body := []byte(eventPayload + strings.Repeat(" ", tt.size-len(eventPayload)))
			resp := do(t, newRequest(t, http.MethodPost, tr.url+"/api/42/store/", compresstest.Bytes(t, "gzip", body), xSentryAuth(testKey)))
			require.Equal(t, tt.wantStatus, resp.status, resp.body)
			if tt.wantStatus == http.StatusRequestEntityTooLarge {
				assert.Equal(t, "event exceeds 4194304 bytes", resp.detail(t))
			}
			assert.Equal(t, tt.wantKept, sinks.logs.LogRecordCount() == 1)
		})
	}
}

// TestLimitsTableNamesEveryItemType keeps README.md's Limits table true:
// every item type the receiver reads has its row there.
func TestLimitsTableNamesEveryItemType(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Limits\n")
	require.True(t, ok, "README.md has a Limits section")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, r := range itemRoutes {
		assert.Contains(t, section, "`"+r.itemType+"`", "the Limits table names %s", r.itemType)
	}
	for _, limit := range []string{"max_request_body_size", "max_items_per_envelope", "max_profile_item_size",
		"max_concurrent_envelopes", "read_timeout", "8 KiB", "16 KiB"} {
		assert.Contains(t, section, limit)
	}
	// The translators' bounds, by name and value, so that the table
	// follows a change of either.
	thousands := func(n int) string { return fmt.Sprintf("%d,%03d", n/1000, n%1000) }
	assert.Contains(t, section, thousands(sentryevent.MaxFormattedChars)+" characters (`sentryevent.MaxFormattedChars`)")
	assert.Contains(t, section, thousands(sentrysignal.DefaultMaxMapEntries)+" (`sentrysignal.DefaultMaxMapEntries`)")
}

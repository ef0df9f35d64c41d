package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TestSDKSignals (E2E=1) runs @sentry/node 11.1.0 with E2E_EVENTS=1 against
// a collector with all four pipelines: the events, logs, metrics, check-in,
// feedback and session the SDK's own recorded requests carried (read here
// with encoding/json) come out of the logs and metrics pipelines, each
// record once.
func TestSDKSignals(t *testing.T) {
	requireE2E(t)
	client, ok := sdkClientByName("node11-static")
	require.True(t, ok)
	dir := t.TempDir()
	logsOut, metricsOut := dir+"/logs.jsonl", dir+"/metrics.jsonl"
	run := runSDK(t, client, sdkRunOptions{
		Env:    []string{"E2E_EVENTS=1"},
		Config: func(a collectorAddrs) string { return withSignalPipelines(sdkCollectorConfig(a), logsOut, metricsOut) },
	})

	sent := readSDKSignals(t, run.Posts())
	require.Len(t, sent.eventIDs, 3, "an exception, a message and feedback: %v", sent.itemTypes)
	require.Positive(t, sent.logEntries, "logs: %v", sent.itemTypes)
	require.NotEmpty(t, sent.metricNames, "metrics: %v", sent.itemTypes)
	require.Positive(t, sent.checkIns, "check-ins: %v", sent.itemTypes)
	require.Positive(t, sent.sessions, "sessions: %v", sent.itemTypes)

	wantRecords := len(sent.eventIDs) + sent.logEntries + sent.checkIns
	var logs []plog.Logs
	require.Eventually(t, func() bool {
		var err error
		logs, err = readLogLines(logsOut)
		require.NoError(t, err)
		return countRecords(logs) >= wantRecords
	}, 30*time.Second, 200*time.Millisecond, "the logs file never held %d records", wantRecords)
	assert.Equal(t, wantRecords, countRecords(logs), "every record once")

	uids, bodies := map[string]int{}, map[string]int{}
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					bodies[lr.Body().AsString()]++
					if v, ok := lr.Attributes().Get("log.record.uid"); ok {
						uids[v.Str()]++
					}
				}
			}
		}
	}
	for _, id := range sent.eventIDs[:2] {
		assert.Equal(t, 1, uids[id], "event %s once", id)
	}
	assert.Equal(t, 1, bodies["e2e: a message captured on purpose"])
	assert.Equal(t, 1, bodies["e2e: a log written on purpose"])
	assert.Equal(t, 1, bodies["e2e: feedback sent on purpose"])

	require.Eventually(t, func() bool {
		metrics, err := readMetricLines(metricsOut)
		require.NoError(t, err)
		points := metricPoints(metrics)
		for _, name := range append(sent.metricNames, "sentry.sessions.started") {
			if points[name] == 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 200*time.Millisecond, "the metrics file never held %v and the session", sent.metricNames)
}

// withSignalPipelines adds logs and metrics pipelines with their file
// exporters to a configuration of sdkCollectorConfig's shape.
func withSignalPipelines(config, logsOut, metricsOut string) string {
	exporters := fmt.Sprintf("  file/logs:\n    path: %q\n    format: json\n    flush_interval: 100ms\n"+
		"  file/metrics:\n    path: %q\n    format: json\n    flush_interval: 100ms\n", logsOut, metricsOut)
	config = strings.Replace(config, "service:\n", exporters+"service:\n", 1)
	return config + "    logs:\n      receivers: [sentryprofile]\n      exporters: [file/logs]\n" +
		"    metrics:\n      receivers: [sentryprofile]\n      exporters: [file/metrics]\n"
}

// sdkSignals is what an SDK's envelopes carried besides profiles and spans.
type sdkSignals struct {
	itemTypes   map[string]int
	eventIDs    []string // event items first, then feedback
	logEntries  int
	metricNames []string
	checkIns    int
	sessions    int
}

func readSDKSignals(t *testing.T, posts []recordedRequest) sdkSignals {
	t.Helper()
	s := sdkSignals{itemTypes: map[string]int{}}
	var feedback []string
	for _, p := range posts {
		items, err := parseEnvelope(p.Body)
		require.NoError(t, err)
		for _, it := range items {
			s.itemTypes[it.Type]++
			var doc struct {
				EventID string `json:"event_id"`
				Items   []struct {
					Name string `json:"name"`
				} `json:"items"`
			}
			switch it.Type {
			case "event", "feedback", "log", "trace_metric":
				require.NoError(t, json.Unmarshal(it.Payload, &doc), it.Type)
			}
			switch it.Type {
			case "event":
				s.eventIDs = append(s.eventIDs, doc.EventID)
			case "feedback":
				feedback = append(feedback, doc.EventID)
			case "log":
				s.logEntries += len(doc.Items)
			case "trace_metric":
				for _, m := range doc.Items {
					s.metricNames = append(s.metricNames, m.Name)
				}
			case "check_in":
				s.checkIns++
			case "session":
				s.sessions++
			}
		}
	}
	s.eventIDs = append(s.eventIDs, feedback...)
	return s
}

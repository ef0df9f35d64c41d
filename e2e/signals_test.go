package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// allSignalsConfig is one sentryprofile receiver in a profiles, a traces, a
// logs and a metrics pipeline, each written by its own file exporter.
const allSignalsConfig = `receivers:
  sentryprofile:
    endpoint: %s
    links:
      wait: 0s
exporters:
  file/profiles: {path: %s}
  file/traces: {path: %s}
  file/logs: {path: %s}
  file/metrics: {path: %s}
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles: {receivers: [sentryprofile], exporters: [file/profiles]}
    traces: {receivers: [sentryprofile], exporters: [file/traces]}
    logs: {receivers: [sentryprofile], exporters: [file/logs]}
    metrics: {receivers: [sentryprofile], exporters: [file/metrics]}
`

// capturedItem is a payload a real SDK sent (translator/*/testdata),
// compacted onto one envelope line.
func capturedItem(t *testing.T, itemType, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "translator", path))
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, raw))
	return append([]byte(`{"type":"`+itemType+`"}`+"\n"), append(compact.Bytes(), '\n')...)
}

// sentEntries reads, with encoding/json, the ids and names the test
// expects back: an event's event_id, a container's entries and names.
type sentEntries struct {
	EventID string `json:"event_id"`
	Items   []struct {
		Name string `json:"name"`
	} `json:"items"`
}

func readSent(t *testing.T, path string) sentEntries {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "translator", path))
	require.NoError(t, err)
	var s sentEntries
	require.NoError(t, json.Unmarshal(raw, &s))
	return s
}

// TestCollectorAllSignals: the built collector with all four pipelines;
// an envelope of a profile chunk, a transaction and the events, logs,
// metrics, a session, a check-in, feedback and a client report @sentry/node
// 11.1.0 sent on this machine, and a /store/ event sentry-python 1.9.10
// sent: every record comes out of its pipeline once, and the envelope's
// signals share one resource.
func TestCollectorAllSignals(t *testing.T) {
	bin := requireBinary(t)
	dir := t.TempDir()
	addr := testnet.FreeLoopbackAddr(t)
	out := func(s string) string { return filepath.Join(dir, s+".jsonl") }
	config := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, allSignalsConfig,
		addr, out("profiles"), out("traces"), out("logs"), out("metrics")), 0o600))
	c := startCollector(t, bin, nil, "--config", config, profilesGate)
	c.waitListening(t, addr)

	chunk := generatedChunk{Function: "allSignalsLeaf", Release: "signals@2.0.0", Environment: "e2e",
		Threads: map[string]string{"7": "main"}, PerThread: 4}
	body, err := newChunkEnvelope(chunk)
	require.NoError(t, err)
	body = withTransaction(t, body)
	events := []string{"sentryevent/testdata/node11_captured_event_1.json", "sentryevent/testdata/node11_captured_event_2.json"}
	for _, p := range events {
		body = append(body, capturedItem(t, "event", p)...)
	}
	logsPath, metricsPath := "sentrylog/testdata/node11_captured_logs_1.json", "sentrymetric/testdata/node11_captured_metrics_1.json"
	body = append(body, capturedItem(t, "log", logsPath)...)
	body = append(body, capturedItem(t, "trace_metric", metricsPath)...)
	body = append(body, capturedItem(t, "session", "sentrysession/testdata/node11_captured_session_1.json")...)
	body = append(body, capturedItem(t, "check_in", "sentrycheckin/testdata/node11_captured_checkin_1.json")...)
	body = append(body, capturedItem(t, "feedback", "sentryfeedback/testdata/node11_captured_feedback_1.json")...)
	body = append(body, capturedItem(t, "client_report", "sentryclientreport/testdata/python268_captured_client_report_1.json")...)
	status, answer := postEnvelope(t, addr, "1", "e2e-key", body, nil)
	require.Equal(t, http.StatusOK, status, answer)

	storePath := "sentryevent/testdata/python1910_captured_store_1.json"
	status, answer = postStore(t, addr, storePath)
	require.Equal(t, http.StatusOK, status, answer)
	stored := readSent(t, storePath)
	assert.JSONEq(t, `{"id":"`+stored.EventID+`"}`, answer)

	sentLogs, sentMetrics := readSent(t, logsPath), readSent(t, metricsPath)
	// 2 events + the log entries + a check-in + feedback + the stored event.
	wantRecords := len(events) + len(sentLogs.Items) + 1 + 1 + 1
	var logs []plog.Logs
	require.Eventually(t, func() bool {
		logs, err = readLogLines(out("logs"))
		require.NoError(t, err)
		return countRecords(logs) >= wantRecords
	}, 30*time.Second, 200*time.Millisecond, "the logs file never held %d records", wantRecords)
	var metrics []pmetric.Metrics
	require.Eventually(t, func() bool {
		metrics, err = readMetricLines(out("metrics"))
		require.NoError(t, err)
		return len(metricPoints(metrics)) >= len(sentMetrics.Items)
	}, 30*time.Second, 200*time.Millisecond, "the metrics file never held the metrics")
	var profiles profilesSummary
	require.Eventually(t, func() bool {
		pds, err := readJSONLines(out("profiles"))
		require.NoError(t, err)
		profiles = summarize(pds...)
		return profiles.SampleEvents >= chunk.Samples()
	}, 30*time.Second, 200*time.Millisecond)
	spans, err := readTraceLines(out("traces"))
	require.NoError(t, err)
	assert.NotEmpty(t, spans)

	assert.Equal(t, wantRecords, countRecords(logs), "every record once")
	uids := map[string]int{}
	for _, ld := range logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					if v, ok := lr.Attributes().Get("log.record.uid"); ok {
						uids[v.Str()]++
					}
				}
			}
		}
	}
	for _, p := range events {
		assert.Equal(t, 1, uids[readSent(t, p).EventID], "event %s once", p)
	}
	assert.Equal(t, 1, uids[stored.EventID], "the stored event once")

	points := metricPoints(metrics)
	for _, m := range sentMetrics.Items {
		assert.Positive(t, points[m.Name], "metric %s", m.Name)
	}
	assert.Equal(t, 1, points["sentry.sessions.started"], "the session's start once")

	// The envelope's logs and metrics carry the resource its profiles
	// carry (service, version, environment, SDK, platform).
	require.Len(t, profiles.Resources, 1)
	want := profiles.Resources[0]
	for _, k := range []string{"service.name", "service.version", "deployment.environment.name",
		"telemetry.sdk.name", "telemetry.sdk.version", "sentry.platform"} {
		require.NotEmpty(t, want[k], "profiles resource %s: %v", k, want)
		for _, res := range []pcommon.Resource{logs[0].ResourceLogs().At(0).Resource(), metrics[0].ResourceMetrics().At(0).Resource()} {
			v, _ := res.Attributes().Get(k)
			assert.Equal(t, want[k], v.AsString(), k)
		}
	}
	for _, ld := range logs {
		assert.Equal(t, 1, ld.ResourceLogs().Len(), "one ResourceLogs per request")
	}
}

// postStore posts a /store/ body as sentry-python 1.x does: gzip-free JSON
// with X-Sentry-Auth.
func postStore(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "translator", path))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/1/store/", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("X-Sentry-Auth", "Sentry sentry_key=e2e-key, sentry_version=7, sentry_client=sentry.python/1.9.10")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(answer)
}

// jsonLines calls f with each complete line of a file exporter's output; a
// missing file has none yet.
func jsonLines(path string, f func([]byte) error) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	i := bytes.LastIndexByte(data, '\n')
	if i < 0 {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data[:i+1]))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
	}
	return nil
}

func readLogLines(path string) ([]plog.Logs, error) {
	var out []plog.Logs
	var um plog.JSONUnmarshaler
	err := jsonLines(path, func(b []byte) error {
		ld, err := um.UnmarshalLogs(b)
		out = append(out, ld)
		return err
	})
	return out, err
}

func readMetricLines(path string) ([]pmetric.Metrics, error) {
	var out []pmetric.Metrics
	var um pmetric.JSONUnmarshaler
	err := jsonLines(path, func(b []byte) error {
		md, err := um.UnmarshalMetrics(b)
		out = append(out, md)
		return err
	})
	return out, err
}

func countRecords(logs []plog.Logs) int {
	n := 0
	for _, ld := range logs {
		n += ld.LogRecordCount()
	}
	return n
}

// metricPoints counts the data points of each metric name.
func metricPoints(metrics []pmetric.Metrics) map[string]int {
	out := map[string]int{}
	for _, md := range metrics {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					switch m.Type() {
					case pmetric.MetricTypeSum:
						out[m.Name()] += m.Sum().DataPoints().Len()
					case pmetric.MetricTypeGauge:
						out[m.Name()] += m.Gauge().DataPoints().Len()
					case pmetric.MetricTypeExponentialHistogram:
						out[m.Name()] += m.ExponentialHistogram().DataPoints().Len()
					case pmetric.MetricTypeHistogram:
						out[m.Name()] += m.Histogram().DataPoints().Len()
					case pmetric.MetricTypeSummary:
						out[m.Name()] += m.Summary().DataPoints().Len()
					}
				}
			}
		}
	}
	return out
}

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// shutdownRounds is how many times TestCollectorShutdownFlushesHeldChunks
// stops a collector. The collector orders the shutdown of two pipelines by
// a topological sort of its graph, so the order that lost held chunks came
// about one stop in five: 20 rounds miss it about once in a hundred runs.
const shutdownRounds = 20

// TestCollectorShutdownFlushesHeldChunks: the README's setup — one
// sentryprofile receiver in a profiles, a traces, a logs and a metrics
// pipeline, real file exporters — gets SIGTERM right after the SDK was
// answered 200 for an envelope whose chunk is held for its span links.
// Every time, the collector must exit cleanly with every record of the
// envelope in its file: the chunk's samples, the transaction's spans, the
// error event and the session.
func TestCollectorShutdownFlushesHeldChunks(t *testing.T) {
	bin := requireBinary(t)
	chunk := generatedChunk{
		Function:    "shutdownHeldLeaf",
		Release:     "shutdown@1.0.0",
		Environment: "shutdown-test",
		Threads:     map[string]string{"7": "MainThread"},
		PerThread:   5,
	}
	body, err := newChunkEnvelope(chunk)
	require.NoError(t, err)
	body = withTransaction(t, body)
	body = append(body, capturedItem(t, "event", "sentryevent/testdata/node11_captured_event_1.json")...)
	body = append(body, capturedItem(t, "session", "sentrysession/testdata/node11_captured_session_1.json")...)
	// The held chunk must wait far longer than the test: only the
	// shutdown can release it.
	config := strings.Replace(allSignalsConfig, "wait: 0s", "wait: 30s", 1)

	for round := range shutdownRounds {
		dir := t.TempDir()
		addr := testnet.FreeLoopbackAddr(t)
		out := func(s string) string { return filepath.Join(dir, s+".jsonl") }
		configPath := filepath.Join(dir, "config.yaml")
		require.NoError(t, os.WriteFile(configPath, fmt.Appendf(nil, config,
			addr, out("profiles"), out("traces"), out("logs"), out("metrics")), 0o600))

		c := startCollector(t, bin, nil, "--config", configPath, profilesGate)
		c.waitListening(t, addr)
		status, answer := postEnvelope(t, addr, "1", "shutdown-key", body, http.Header{"Content-Type": {"application/x-sentry-envelope"}})
		require.Equal(t, http.StatusOK, status, "round %d: %s", round, answer)
		// The collector handles SIGTERM only once its startup is over,
		// a moment after its receivers listen: before, the signal ends it
		// at once. That window is the collector's, not what this test is
		// about, so the signal waits for the startup's last log line.
		require.Eventually(t, func() bool { return strings.Contains(c.output.String(), "Everything is ready") },
			20*time.Second, 10*time.Millisecond, "round %d: startup never finished", round)
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
		select {
		case <-c.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the collector did not stop within 20s of SIGTERM\n%s", round, c.output.String())
		}
		require.NoError(t, c.err, "round %d: the collector must exit cleanly\n%s", round, c.output.String())
		requireEveryRecordOut(t, round, chunk.Samples(), out, c.output.String())
	}
}

// requireEveryRecordOut checks what the shutdown test's envelope must have
// left in the four files.
func requireEveryRecordOut(t *testing.T, round, samples int, out func(string) string, collectorLog string) {
	t.Helper()
	pds, err := readJSONLines(out("profiles"))
	require.NoError(t, err)
	require.Equal(t, samples, summarize(pds...).SampleEvents,
		"round %d: the held chunk's samples in the profiles file\n%s", round, collectorLog)
	spans := 0
	require.NoError(t, jsonLines(out("traces"), func(line []byte) error {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		spans += td.SpanCount()
		return err
	}))
	require.Positive(t, spans, "round %d: the transaction's spans in the traces file", round)
	logs, err := readLogLines(out("logs"))
	require.NoError(t, err)
	require.Equal(t, 1, countRecords(logs), "round %d: the error event in the logs file", round)
	metrics, err := readMetricLines(out("metrics"))
	require.NoError(t, err)
	require.Equal(t, 1, metricPoints(metrics)["sentry.sessions.started"], "round %d: the session in the metrics file", round)
}

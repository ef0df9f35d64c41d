package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// shutdownRounds is how many times TestCollectorShutdownFlushesHeldChunks
// stops a collector. The collector orders the shutdown of two pipelines by
// a topological sort of its graph, so the order that lost held chunks came
// about one stop in five: 20 rounds miss it about once in a hundred runs.
const shutdownRounds = 20

// TestCollectorShutdownFlushesHeldChunks: the README's setup — one
// sentryprofile receiver in a profiles and a traces pipeline, real file
// exporters — gets SIGTERM right after the SDK was answered 200 for a chunk
// held for its span links. Every time, the collector must exit cleanly with
// the chunk's samples in the profiles file.
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

	for round := range shutdownRounds {
		dir := t.TempDir()
		addr := testnet.FreeLoopbackAddr(t)
		profilesOut, tracesOut := filepath.Join(dir, "profiles.jsonl"), filepath.Join(dir, "traces.jsonl")
		config := filepath.Join(dir, "config.yaml")
		require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `
receivers:
  sentryprofile:
    endpoint: %s
    links:
      wait: 30s
exporters:
  file/profiles:
    path: %s
  file/traces:
    path: %s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [file/profiles]
    traces:
      receivers: [sentryprofile]
      exporters: [file/traces]
`, addr, profilesOut, tracesOut), 0o600))

		c := startCollector(t, bin, nil, "--config", config, profilesGate)
		c.waitListening(t, addr)
		status, answer := postEnvelope(t, addr, "1", "shutdown-key", body, http.Header{"Content-Type": {"application/x-sentry-envelope"}})
		require.Equal(t, http.StatusOK, status, "round %d: %s", round, answer)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
		select {
		case <-c.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the collector did not stop within 20s of SIGTERM\n%s", round, c.output.String())
		}
		require.NoError(t, c.err, "round %d: the collector must exit cleanly\n%s", round, c.output.String())

		pds, err := readJSONLines(profilesOut)
		require.NoError(t, err)
		require.Equal(t, chunk.Samples(), summarize(pds...).SampleEvents,
			"round %d: the held chunk's samples in the profiles file\n%s", round, c.output.String())
	}
}

package benchmarks

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/proccpu"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// builtCollectorConfig runs the receiver alone in front of the debug
// exporter at its cheapest verbosity: what is measured is the collector's
// HTTP stack, the receiver and the pipeline hand-off, not an exporter.
// Chunks are not held for their spans, so each request is answered after
// its translation.
const builtCollectorConfig = `receivers:
  sentryprofile:
    endpoint: %q
    links:
      wait: 0s
exporters:
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [debug]
`

// startBuiltCollector starts the collector binary named by OTELCOL_BIN
// (`make load` sets it) and returns the envelope URL and the collector's
// process id; without it the benchmark is skipped.
func startBuiltCollector(b *testing.B) (string, int) {
	b.Helper()
	bin := os.Getenv("OTELCOL_BIN")
	if bin == "" {
		b.Skip("OTELCOL_BIN is not set: this benchmark measures the built collector (make load)")
	}
	addr := testnet.FreeLoopbackAddr(b)
	dir := b.TempDir()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, builtCollectorConfig, addr), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", config, "--feature-gates=service.profilesSupport")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("collector not listening on %s:\n%s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr + "/api/42/envelope/?sentry_key=0123456789abcdef0123456789abcdef&sentry_version=7", cmd.Process.Pid
}

// BenchmarkBuiltCollector posts the 5.25 MB V2 chunk, gzip'd, to the built
// collector one request at a time, next to encoding/json decoding the same
// JSON in the same run (the issue-18 target: the collector's whole request
// at least 4× faster than encoding/json's decode alone). Each collector
// case reports that ratio as x-json (encoding/json's time per decode in
// this run over the collector's time per request) and, in CPU time, as
// x-json-cpu.
func BenchmarkBuiltCollector(b *testing.B) {
	chunk := benchdata.ChunkV2(benchdata.LargeChunkConfig())
	body := compresstest.Bytes(b, "gzip", benchdata.Envelope("profile_chunk", "python", chunk))

	var ref perOp // of the last (the measured) run of the reference
	b.Run("LargeChunk/EncodingJSON", func(b *testing.B) {
		cpu := proccpu.Self()
		benchmarkEncodingJSONDecode(b, chunk)
		ref = perOp{wall: float64(b.Elapsed()) / float64(b.N), cpu: float64(proccpu.Self()-cpu) / float64(b.N)}
		b.ReportMetric(ref.cpu, "cpu-ns/op")
	})
	// The gzip'd body as SDKs send it, and the same JSON uncompressed: the
	// difference is the inflate, the SDK's compression.
	for _, tc := range []struct {
		name, encoding string
		body           []byte
	}{
		{"LargeChunk/CollectorGzip", "gzip", body},
		{"LargeChunk/CollectorIdentity", "", benchdata.Envelope("profile_chunk", "python", chunk)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			url, pid := startBuiltCollector(b)
			post := envelopePoster(b, url, tc.encoding, tc.body)
			post() // the first request warms the pools
			b.SetBytes(int64(len(chunk)))
			cpuBefore, cpuErr := proccpu.Of(pid)
			b.ResetTimer()
			for b.Loop() {
				post()
			}
			cpuAfter, err := proccpu.Of(pid)
			reportAgainst(b, ref, float64(cpuAfter-cpuBefore)/float64(b.N), err == nil && cpuErr == nil)
		})
	}
}

// perOp is a benchmark's wall and CPU time per op, in nanoseconds.
type perOp struct{ wall, cpu float64 }

// reportAgainst reports the collector's CPU time per request (when
// measured) and its ratios to the reference's times per op.
func reportAgainst(b *testing.B, ref perOp, cpu float64, measured bool) {
	if ref.wall > 0 {
		b.ReportMetric(ref.wall/(float64(b.Elapsed())/float64(b.N)), "x-json")
	}
	if measured && ref.cpu > 0 && cpu > 0 {
		b.ReportMetric(cpu, "cpu-ns/op")
		b.ReportMetric(ref.cpu/cpu, "x-json-cpu")
	}
}

// envelopePoster returns a function that posts body to url, with its
// Content-Encoding when not empty, and fails b unless it is answered 200.
func envelopePoster(b *testing.B, url, encoding string, body []byte) func() {
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	return func() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if encoding != "" {
			req.Header.Set("Content-Encoding", encoding)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d: %s", resp.StatusCode, answer)
		}
	}
}

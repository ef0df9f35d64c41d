package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// The time Pyroscope shows: real SDKs' profiles go through the built
// collector to Grafana Pyroscope, and each service's total there must be
// the wall time Sentry shows for the same profiles.

// pythonCaptures are requests sentry-python 2.68.0 made (shared fixtures:
// the exact HTTP body and headers), of service anchors-capture: a V1
// transaction profile and two V2 chunks, four threads, one of them missing
// from a chunk's thread_metadata.
var pythonCaptures = []string{
	"sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_1",
	"sentry-python-2.68.0__captured_http__v2_profile_chunk_2",
}

// envSentryPythonSrc names a sentry-python 2.x source tree (its directory
// holding sentry_sdk/): with it the check also runs sentrypython/chunks.py,
// whose continuous profiler sends a full 60-s chunk of 4 threads, more
// samples than Pyroscope's default max_profile_stacktrace_samples.
const envSentryPythonSrc = "SENTRY_PYTHON_SRC"

// captureKey is the public key of the captures' DSN.
const captureKey = "0123456789abcdef0123456789abcdef"

// captureTime is when the captures were made (their sent_at).
var captureTime = time.Date(2026, 11, 22, 6, 26, 38, 0, time.UTC)

// TestPyroscopeShowsSentrysTime sends the sentry-python captures (and, with
// E2E=1, every real SDK client's recorded requests, replayed) through the
// built collector to Pyroscope and compares, per service, Pyroscope's total
// with Sentry's rule computed from the envelopes themselves
// (sentryServiceTime). Pyroscope is the binary in PYROSCOPE_BIN when set,
// else compat/pyroscope's model of what it ingests and keeps.
func TestPyroscopeShowsSentrysTime(t *testing.T) {
	bin := requireBinary(t)
	backend := startPyroscope(t)

	dir := t.TempDir()
	receiver := testnet.FreeLoopbackAddr(t)
	output := filepath.Join(dir, "profiles.jsonl")
	config := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(pyroscopeCollectorConfig(receiver, backend.Endpoint(), output)), 0o600))
	c := startCollector(t, bin, nil, "--config", config, profilesGate)
	c.waitListening(t, receiver)

	var bodies [][]byte
	items := 0
	// Pyroscope refuses profiles older than an hour and does not find
	// older ones it was told to keep: the captures are moved to a few
	// minutes ago, every timestamp by the same whole seconds.
	shift := time.Since(captureTime).Truncate(time.Second) - 5*time.Minute
	for _, name := range pythonCaptures {
		body, header := readCapture(t, name)
		plain, err := shiftEnvelope(gunzip(t, body), shift)
		require.NoError(t, err, name)
		header.headers.Del("Content-Encoding")
		status, answer := postRaw(t, receiver, header.path, plain, header.headers)
		require.Equal(t, http.StatusOK, status, "%s: %s", name, answer)
		bodies = append(bodies, plain)
		items += countProfileItems(t, plain)
	}
	if src := os.Getenv(envSentryPythonSrc); src != "" {
		for _, r := range runLongChunks(t, src, receiver) {
			bodies = append(bodies, r.Body)
			items += countProfileItems(t, r.Body)
		}
	}
	if os.Getenv(envE2E) == "1" {
		for _, client := range sdkClients() {
			for _, r := range sharedSDKRun(t, client.Name).Posts() {
				status, answer := postEnvelope(t, receiver, sdkProject, sdkPublicKey, r.Body, http.Header{"Content-Type": {"application/x-sentry-envelope"}})
				require.Equal(t, http.StatusOK, status, "%s: %s", client.Name, answer)
				bodies = append(bodies, r.Body)
				items += countProfileItems(t, r.Body)
			}
		}
	}

	// Every item's profile is out of the file exporter once the exporters
	// to Pyroscope and to the file have both had it (one pipeline).
	deadline := time.Now().Add(30 * time.Second)
	var periods map[string]int64
	var starts []time.Time
	for {
		pds, err := readJSONLines(output)
		require.NoError(t, err)
		periods, starts = outputPeriods(pds)
		if len(periods) >= items || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.Len(t, periods, items, "profiles out of the collector vs profile items sent")

	want, err := sentryServiceTime(bodies, periods)
	require.NoError(t, err)
	got := backend.Totals(t, services(want), queryWindows(starts))
	var rows []string
	for _, svc := range services(want) {
		share := float64(got[svc]) / want[svc]
		rows = append(rows, fmt.Sprintf("%-28s Sentry %8.3f s  Pyroscope %8.3f s  share %.3f", svc, want[svc]/1e9, float64(got[svc])/1e9, share))
		assert.InDelta(t, 1, share, 0.01, "%s: Pyroscope shows %d ns, Sentry %.0f ns", svc, got[svc], want[svc])
	}
	t.Logf("%s, per service:\n%s", backend, strings.Join(rows, "\n"))
}

// pyroscopeCollectorConfig is the receiver (the captures' key and the SDK
// clients', project 42) exporting to Pyroscope over OTLP/HTTP and to a
// file, for the oracle's periods.
func pyroscopeCollectorConfig(receiver, pyroscope, output string) string {
	return fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %q
    public_keys: [%q, %q]
    projects: [%q]
exporters:
  otlp_http/pyroscope:
    endpoint: %q
    retry_on_failure:
      enabled: false
  file:
    path: %q
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [otlp_http/pyroscope, file]
`, receiver, captureKey, sdkPublicKey, sdkProject, pyroscope, output)
}

type captureHeader struct {
	path    string
	headers http.Header
}

// readCapture reads a captured request: its exact body and headers.
func readCapture(t *testing.T, name string) ([]byte, captureHeader) {
	t.Helper()
	body := fixtures.Read(t, name+".request.gz")
	var h struct {
		Path    string            `json:"path"`
		Headers map[string]string `json:"headers"`
	}
	require.NoError(t, json.Unmarshal(fixtures.Read(t, name+".request_headers.json"), &h))
	out := captureHeader{path: h.Path, headers: http.Header{}}
	for k, v := range h.Headers {
		switch k {
		case "Host", "Content-Length":
		default:
			out.headers.Set(k, v)
		}
	}
	return body, out
}

// postRaw posts body to path as it is, with header.
func postRaw(t *testing.T, addr, path string, body []byte, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = header.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(answer)
}

func gunzip(t *testing.T, body []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err)
	return out
}

func countProfileItems(t *testing.T, body []byte) int {
	t.Helper()
	items, err := parseEnvelope(body)
	require.NoError(t, err)
	n := 0
	for _, it := range items {
		if it.Type == "profile" || it.Type == "profile_chunk" {
			n++
		}
	}
	return n
}

func services(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shiftEnvelope moves every timestamp of an envelope by d: the header's
// sent_at and, in each JSON item, every "timestamp", "start_timestamp" and
// "sent_at" (epoch seconds or RFC 3339). Relative times (a V1 sample's
// elapsed_since_start_ns) stay. Item lengths are rewritten.
func shiftEnvelope(body []byte, d time.Duration) ([]byte, error) {
	header, _, _ := bytes.Cut(body, []byte("\n"))
	var out bytes.Buffer
	h, err := shiftJSON(header, d)
	if err != nil {
		return nil, fmt.Errorf("envelope header: %w", err)
	}
	out.Write(h)
	out.WriteByte('\n')
	items, err := parseEnvelope(body)
	if err != nil {
		return nil, err
	}
	for i, it := range items {
		payload, err := shiftJSON(it.Payload, d)
		if err != nil {
			return nil, fmt.Errorf("item %d (%s): %w", i, it.Type, err)
		}
		ih, err := json.Marshal(map[string]any{"type": it.Type, "length": len(payload)})
		if err != nil {
			return nil, err
		}
		out.Write(ih)
		out.WriteByte('\n')
		out.Write(payload)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

func shiftJSON(doc []byte, d time.Duration) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if err := shiftValue(v, d); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func shiftValue(v any, d time.Duration) error {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "timestamp", "start_timestamp", "sent_at":
				shifted, err := shiftTime(val, d)
				if err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				x[k] = shifted
				continue
			}
			if err := shiftValue(val, d); err != nil {
				return err
			}
		}
	case []any:
		for _, val := range x {
			if err := shiftValue(val, d); err != nil {
				return err
			}
		}
	}
	return nil
}

func shiftTime(v any, d time.Duration) (any, error) {
	switch x := v.(type) {
	case json.Number:
		sec, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return json.Number(strconv.FormatFloat(sec+d.Seconds(), 'f', -1, 64)), nil
	case string:
		at, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return nil, err
		}
		return at.Add(d).Format(time.RFC3339Nano), nil
	}
	return v, nil
}

// runLongChunks runs sentrypython/chunks.py with the SDK at src against the
// receiver through a recording proxy and returns the envelope requests it
// made, bodies decompressed.
func runLongChunks(t *testing.T, src, receiver string) []recordedRequest {
	t.Helper()
	rec, proxy := newSDKRecorder(t, receiver)
	python := os.Getenv(envPython)
	if python == "" {
		python = "/usr/bin/python3"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "chunks.py")
	cmd.Dir = filepath.Join(repoRoot(t), "e2e", "sentrypython")
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(),
		"PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1",
		"SENTRY_DSN=http://"+sdkPublicKey+"@"+proxy+"/"+sdkProject,
		"E2E_RELEASE=e2e-python2-chunks@2.3.4", "E2E_ENVIRONMENT="+sdkEnvironment)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s chunks.py with %s=%s:\n%s", python, envSentryPythonSrc, src, out)
	t.Logf("sentry-python %s from %s: a continuous-profiling run", strings.TrimSpace(string(out)), src)
	require.NoError(t, waitForProfileItems(rec, 2, 20*time.Second))
	reqs, err := rec.snapshot()
	require.NoError(t, err)
	var posts []recordedRequest
	for _, r := range reqs {
		if r.Method == http.MethodPost {
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", r.Path, r.Response)
			posts = append(posts, r)
		}
	}
	return posts
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
)

// What the Node program is told to report, and what must come out.
const (
	nodeFunction    = "e2eBusyFibonacci" // defined in node/app.js
	nodeRelease     = "e2e-node-app@2.3.4"
	nodeEnvironment = "e2e-ci"
	nodePublicKey   = "e2e0public0key"
	nodeProject     = "42"
)

// TestNodeSDK runs the real @sentry/node SDK with continuous profiling
// against the receiver, in-process and in the built collector, and checks
// that the profiles arrive complete: the program's own function, its main
// thread, its release and environment, and every sample the SDK sent.
func TestNodeSDK(t *testing.T) {
	if os.Getenv(envE2E) != "1" {
		t.Skipf("%s=1 is not set: this test installs @sentry/node from npm and runs node; run `make e2e`", envE2E)
	}
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s=1 asks for the real-SDK test, which needs %s on PATH", envE2E, tool)
	}
	app := installNodeApp(t)

	t.Run("InProcessReceiver", func(t *testing.T) {
		sink := new(consumertest.ProfilesSink)
		addr := startReceiver(t, sink)
		rec, proxyAddr := newSDKRecorder(t, addr)

		runNodeApp(t, app, proxyAddr)

		want := checkSDKRequests(t, rec)
		var got profilesSummary
		// The receiver answers after the pipeline took the data, so this
		// normally holds at once; the wait only absorbs scheduling.
		require.Eventually(t, func() bool {
			got = summarize(sink.AllProfiles()...)
			return got.SampleEvents >= want.Samples
		}, 10*time.Second, 50*time.Millisecond, "sink never reached the %d samples the SDK sent", want.Samples)
		checkNodeProfiles(t, got, want)
	})

	t.Run("BuiltCollector", func(t *testing.T) {
		bin := os.Getenv(envBinary)
		if bin == "" {
			bin = filepath.Join(repoRoot(t), "bin", "otelcol-sentryprofile")
		}
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("no built collector at %s (run `make build`, or set %s): %v", bin, envBinary, err)
		}
		addr := freeLoopbackAddr(t)
		dir := t.TempDir()
		out := filepath.Join(dir, "profiles.jsonl")
		config := filepath.Join(dir, "config.yaml")
		require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`receivers:
  sentryprofile:
    endpoint: %q
    public_keys: [%q]
    projects: [%q]
exporters:
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
      exporters: [file]
`, addr, nodePublicKey, nodeProject, out)), 0o600))
		c := startCollector(t, bin, nil, "--config", config, profilesGate)
		c.waitListening(t, addr)
		rec, proxyAddr := newSDKRecorder(t, addr)

		runNodeApp(t, app, proxyAddr)

		want := checkSDKRequests(t, rec)
		var got profilesSummary
		require.Eventually(t, func() bool {
			pds, err := readJSONLines(out)
			require.NoError(t, err)
			got = summarize(pds...)
			return got.SampleEvents >= want.Samples
		}, 30*time.Second, 200*time.Millisecond, "%s never reached the %d samples the SDK sent", out, want.Samples)
		checkNodeProfiles(t, got, want)
	})
}

// installNodeApp copies node/ without node_modules into a temporary
// directory and installs the pinned SDK there from the lockfile.
func installNodeApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "app.js"} {
		data, err := os.ReadFile(filepath.Join("node", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	started := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm ci in %s:\n%s", dir, out)
	t.Logf("npm ci: %s", time.Since(started).Round(time.Millisecond))
	return dir
}

// startReceiver runs the sentryprofile receiver in this process, feeding
// sink, and returns its address.
func startReceiver(t *testing.T, sink *consumertest.ProfilesSink) string {
	t.Helper()
	factory := sentryprofilereceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	addr := freeLoopbackAddr(t)
	cfg.ServerConfig.NetAddr.Endpoint = addr
	cfg.PublicKeys = []configopaque.String{nodePublicKey}
	cfg.Projects = []string{nodeProject}
	require.NoError(t, cfg.Validate())

	ctx := context.Background()
	rcv, err := factory.CreateProfiles(ctx, receivertest.NewNopSettings(factory.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, rcv.Shutdown(context.Background())) })
	return addr
}

// runNodeApp runs app.js against a DSN on addr and waits for it to exit; the
// program flushes the SDK before it does.
func runNodeApp(t *testing.T, app, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "app.js")
	cmd.Dir = app
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("SENTRY_DSN=http://%s@%s/%s", nodePublicKey, addr, nodeProject),
		"E2E_RELEASE="+nodeRelease,
		"E2E_ENVIRONMENT="+nodeEnvironment,
		"E2E_BUSY_MS=3000",
	)
	started := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node app.js:\n%s", out)
	t.Logf("node app.js (%s): %s", time.Since(started).Round(time.Millisecond), out)
}

// sdkSent is what the recorded SDK requests held.
type sdkSent struct {
	sentSamples
	Threads map[string]string // thread_metadata of the chunks: id → name
}

// checkSDKRequests checks that the SDK sent profile chunks and that the
// receiver accepted each of them, and returns what they held.
func checkSDKRequests(t *testing.T, rec *sdkRecorder) sdkSent {
	t.Helper()
	reqs, err := rec.snapshot()
	require.NoError(t, err)
	total, withChunks := sent(t, reqs)
	require.Positive(t, total.Chunks, "the SDK sent no profile_chunk in %d requests", len(reqs))
	require.Positive(t, total.Samples, "the SDK's chunks held no samples")

	want := sdkSent{sentSamples: total, Threads: map[string]string{}}
	for _, r := range withChunks {
		assert.Equal(t, http.StatusOK, r.Status, "receiver answer to %s: %s", r.Path, r.Response)
		assert.Equal(t, nodePublicKey, r.Query.Get("sentry_key"), "@sentry/node authenticates in the query string")
		items, err := parseEnvelope(r.Body)
		require.NoError(t, err)
		for _, it := range items {
			if it.Type != "profile_chunk" {
				continue
			}
			var chunk struct {
				Profile struct {
					ThreadMetadata map[string]struct {
						Name string `json:"name"`
					} `json:"thread_metadata"`
				} `json:"profile"`
			}
			require.NoError(t, json.Unmarshal(it.Payload, &chunk))
			for id, m := range chunk.Profile.ThreadMetadata {
				want.Threads[id] = m.Name
			}
		}
	}
	t.Logf("the SDK sent %d profile chunks with %d samples in %d requests", total.Chunks, total.Samples, len(reqs))
	return want
}

// checkNodeProfiles compares the pipeline's output with what the SDK sent.
func checkNodeProfiles(t *testing.T, got profilesSummary, want sdkSent) {
	t.Helper()
	assert.Equal(t, want.Samples, got.SampleEvents, "sample events out vs samples the SDK sent")
	assert.Equal(t, want.Chunks, got.Profiles, "one profile per chunk")
	assert.True(t, got.Functions[nodeFunction], "the program's function %s is missing; functions: %v", nodeFunction, got.Functions)
	assert.True(t, got.hasResource(string(semconv.ServiceVersionKey), nodeRelease), "release %s: resources %v", nodeRelease, got.Resources)
	assert.True(t, got.hasResource(string(semconv.DeploymentEnvironmentNameKey), nodeEnvironment), "environment %s: resources %v", nodeEnvironment, got.Resources)

	require.NotEmpty(t, want.Threads, "the SDK sent no thread_metadata")
	mainSeen := false
	for id, name := range want.Threads {
		gotName, ok := got.Threads[id]
		if !ok {
			continue // described by thread_metadata but never sampled
		}
		assert.Equal(t, name, gotName, "thread %s", id)
		mainSeen = mainSeen || name == "main"
	}
	assert.True(t, mainSeen, "the main thread is missing: SDK threads %v, output threads %v", want.Threads, got.Threads)
}

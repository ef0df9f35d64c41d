package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// workloadFunctions are the named functions every client program spends its
// time in (node/app.js, node10/app.js, browser/workload.js, sentrygo/main.go,
// sentrypython/app.py).
var workloadFunctions = []string{"e2eBusyFibonacci", "e2eOuterChecksum", "e2eInnerCompute"}

// sdkClients lists every real SDK that runs here. Items are the envelope
// item types the client must send: they prove it runs in the mode its name
// says.
func sdkClients() []sdkClient {
	return []sdkClient{
		{
			Name: "node8-v1", SDK: "@sentry/node 8.55.2", Mode: "V1 profilesSampleRate",
			run: nodeProgram("node8", legacyNodeApp, "E2E_PROFILE_MODE=transaction"),
		},
		{
			Name: "node8-v2", SDK: "@sentry/node 8.55.2", Mode: "V2 profiler.startProfiler",
			run: nodeProgram("node8", legacyNodeApp, "E2E_PROFILE_MODE=manual"),
		},
		{
			Name: "node9-v1", SDK: "@sentry/node 9.47.1", Mode: "V1 profilesSampleRate",
			run: nodeProgram("node9", legacyNodeApp, "E2E_PROFILE_MODE=transaction"),
		},
		{
			Name: "node9-v2", SDK: "@sentry/node 9.47.1", Mode: "V2 trace lifecycle",
			run: nodeProgram("node9", legacyNodeApp, "E2E_PROFILE_MODE=continuous"),
		},
		{
			Name: "node10-v1", SDK: "@sentry/node 10.75.3", Mode: "V1 profilesSampleRate",
			run: nodeProgram("node10", "app.js", "E2E_PROFILE_MODE=transaction"),
		},
		{
			Name: "node10-v2", SDK: "@sentry/node 10.75.3", Mode: "V2 trace lifecycle",
			run: nodeProgram("node10", "app.js", "E2E_PROFILE_MODE=continuous"),
		},
		{
			Name: "node11-static", SDK: "@sentry/node 11.1.0", Mode: "V2 traceLifecycle static",
			run: nodeProgram("node", "app.js", "E2E_TRACE_LIFECYCLE=static"),
		},
		{
			Name: "node11-stream", SDK: "@sentry/node 11.1.0", Mode: "V2 span streaming",
			run: nodeProgram("node", "app.js", "E2E_TRACE_LIFECYCLE=stream"),
		},
		{
			Name: "browser10-v1", SDK: "@sentry/browser 10.75.3", Mode: "V1 profilesSampleRate",
			run: browserPage("page10.js"),
		},
		{
			Name: "browser11-v2", SDK: "@sentry/browser 11.1.0", Mode: "V2 UI profiling, span streaming",
			run: browserPage("page11.js"),
		},
		{
			Name: "go-v1", SDK: "sentry-go v0.30.0", Mode: "V1 ProfilesSampleRate",
			run: goProgram("sentrygo"),
		},
		{
			Name: "python1-wsgi", SDK: "sentry-python 1.9.10 (Debian)", Mode: "V1 _experiments, WSGI",
			run: wsgiService("sentrypython"),
		},
	}
}

// sdkItems are the item types each client must send.
var sdkItems = map[string][]string{
	"node8-v1":      {"transaction", "profile"},
	"node8-v2":      {"transaction", "profile_chunk"},
	"node9-v1":      {"transaction", "profile"},
	"node9-v2":      {"transaction", "profile_chunk"},
	"node10-v1":     {"transaction", "profile"},
	"node10-v2":     {"transaction", "profile_chunk"},
	"node11-static": {"transaction", "profile_chunk"},
	"node11-stream": {"span", "profile_chunk"},
	"browser10-v1":  {"transaction", "profile"},
	"browser11-v2":  {"span", "profile_chunk"},
	"go-v1":         {"transaction", "profile"},
	"python1-wsgi":  {"transaction", "profile"},
}

func sdkClientByName(name string) (sdkClient, bool) {
	for _, c := range sdkClients() {
		if c.Name == name {
			return c, true
		}
	}
	return sdkClient{}, false
}

// requireE2E skips unless E2E=1, and then requires node and npm.
func requireE2E(t *testing.T) {
	t.Helper()
	if os.Getenv(envE2E) != "1" {
		t.Skipf("%s=1 is not set: this test runs real Sentry SDKs (npm packages, Chromium, sentry-go, Debian's sentry-python) against the built collector; run `make e2e`", envE2E)
	}
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s=1 asks for the real-SDK tests, which need %s on PATH", envE2E, tool)
	}
}

// TestSDKs runs every real SDK client, each against a built collector of
// its own and all at once, and checks per client that every sample the SDK
// sent came out of the file exporter with the program's own functions,
// threads, release and environment, that every span it sent came out of the
// traces pipeline in its tree, and that the collector counted nothing as
// discarded. It ends with a table of the runs (also written to the file
// named by E2E_TABLE).
func TestSDKs(t *testing.T) {
	requireE2E(t)
	clients := sdkClients()
	var (
		mu     sync.Mutex
		runs   = map[string]*sdkRun{}
		failed = map[string]bool{}
	)
	t.Run("clients", func(t *testing.T) {
		for _, c := range clients {
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				defer func() {
					mu.Lock()
					defer mu.Unlock()
					failed[c.Name] = t.Failed()
				}()
				run := sharedRuns.get(t, c)
				mu.Lock()
				runs[c.Name] = run
				mu.Unlock()
				checkSDKRun(t, run)
				checkSDKTraces(t, run)
				checkSDKLinks(t, run)
			})
		}
	})

	table := sdkTable(clients, runs, failed)
	t.Logf("per-client results:\n%s", table)
	if path := os.Getenv(envTable); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(table), 0o644))
	}
}

// checkSDKRun checks one client's run: the SDK's requests were all accepted,
// every sample it sent came out, with its functions, threads, release and
// environment, and the collector discarded nothing.
func checkSDKRun(t *testing.T, run *sdkRun) {
	t.Helper()
	t.Logf("%s: %d requests, items %v; the receiver's own counters: %v", run.Client.Name, len(run.Requests), run.Sent.Items, run.Metrics.Receiver)
	posts := run.Posts()
	require.NotEmpty(t, posts, "the SDK made no envelope request")
	for i, r := range posts {
		assert.Equal(t, http.StatusOK, r.Status, "request %d to %s answered %s", i, r.Path, r.Response)
	}
	// The collector's own HTTP server metrics count the same requests: none
	// was lost between the proxy and the receiver, each answered 200.
	assert.Equal(t, map[string]int{"200": len(posts)}, run.Metrics.Posts, "POSTs the receiver answered, by status, vs the %d the SDK made", len(posts))
	assert.Zero(t, run.Metrics.Refused, "profile samples the pipeline refused or failed")
	for _, typ := range sdkItems[run.Client.Name] {
		assert.Positive(t, run.Sent.Items[typ], "the SDK sent no %s item; items: %v", typ, run.Sent.Items)
	}
	require.NotEmpty(t, run.Sent.Profiles, "the SDK sent no profile item; items: %v", run.Sent.Items)
	require.Positive(t, run.Sent.Samples(), "the SDK's profiles hold no samples")

	assert.Zero(t, run.Metrics.DiscardedTotal(), "the collector discarded items: %v", run.Metrics.Discarded)
	assert.Equal(t, run.Sent.Samples(), run.Got.SampleEvents, "samples out of the file exporter vs samples the SDK sent")
	assert.Equal(t, len(run.Sent.Profiles), run.Got.Profiles, "one OTLP profile per profile item")

	for _, fn := range workloadFunctions {
		assert.True(t, hasFunction(run.Got.Functions, fn), "the program's function %s is missing; functions: %v", fn, keys(run.Got.Functions))
	}
	assert.True(t, run.Got.hasResource(string(semconv.ServiceVersionKey), run.Env.Release), "service.version %s: resources %v", run.Env.Release, run.Got.Resources)
	assert.True(t, run.Got.hasResource(string(semconv.DeploymentEnvironmentNameKey), run.Env.Environment), "deployment.environment.name %s: resources %v", run.Env.Environment, run.Got.Resources)

	// Every thread the SDK sampled comes out under its id, with the name
	// the SDK's thread_metadata gave it; no other thread does.
	sentThreads := run.Sent.Threads()
	require.NotEmpty(t, sentThreads)
	for id, name := range sentThreads {
		gotName, ok := run.Got.Threads[id]
		if !assert.True(t, ok, "sampled thread %s (%q) is missing from the output; output threads %v", id, name, run.Got.Threads) {
			continue
		}
		if name != "" {
			assert.Equal(t, name, gotName, "thread.name of thread %s", id)
		}
	}
	for id := range run.Got.Threads {
		_, ok := sentThreads[id]
		assert.True(t, ok, "output thread %s was never sampled by the SDK", id)
	}
}

// hasFunction reports whether names holds fn itself or fn qualified by a
// package or module (Go frames may read main.fn).
func hasFunction(names map[string]bool, fn string) bool {
	if names[fn] {
		return true
	}
	for name := range names {
		if strings.HasSuffix(name, "."+fn) {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

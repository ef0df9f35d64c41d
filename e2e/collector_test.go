package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// TestCollectorSmoke starts the built collector with config.yaml, the
// configuration `make run` uses, moved to a free loopback port and a
// temporary output file, posts envelopes to it and reads them back from the
// file exporter's OTLP JSON.
func TestCollectorSmoke(t *testing.T) {
	bin := requireBinary(t)
	addr := testnet.FreeLoopbackAddr(t)
	out := filepath.Join(t.TempDir(), "profiles.jsonl")
	c := startCollector(t, bin, nil,
		"--config", filepath.Join(repoRoot(t), "config.yaml"),
		profilesGate,
		"--set=receivers::sentryprofile::endpoint="+addr,
		"--set=exporters::file::path="+out,
		// Other collectors (a `make run`, another test) may hold the
		// default telemetry port.
		"--set=service::telemetry::metrics::level=none",
	)
	c.waitListening(t, addr)

	generated := generatedChunk{
		Function:    "smokeGeneratedLeaf",
		Release:     "smoke@1.2.3",
		Environment: "smoke-test",
		Threads:     map[string]string{"140245": "MainThread", "140246": "worker-1"},
		PerThread:   6,
	}
	envelope, err := newChunkEnvelope(generated)
	require.NoError(t, err)

	type posted struct {
		name     string
		body     []byte
		header   http.Header
		function string // a function name the output must hold
		release  string
		samples  int
	}
	cases := []posted{{
		name: "generated V2 chunk", body: envelope,
		header:   http.Header{"Content-Type": {"application/x-sentry-envelope"}},
		function: generated.Function, release: generated.Release, samples: generated.Samples(),
	}}
	// Real SDK envelopes when the shared fixtures are beside the checkout.
	if _, err := os.Stat(filepath.Join(repoRoot(t), "..", "shared", "fixtures", "sentry")); err == nil {
		for _, path := range fixtures.Files(t, "v2_profile_chunk_1.envelope", "v2_profile_chunk_2.envelope") {
			body, err := os.ReadFile(path)
			require.NoError(t, err)
			n, err := countChunkSamples(body)
			require.NoError(t, err, path)
			require.Positive(t, n.Samples, path)
			cases = append(cases, posted{name: filepath.Base(path), body: body, samples: n.Samples})
		}
	}

	wantSamples := 0
	for _, p := range cases {
		status, answer := postEnvelope(t, addr, "1", "smoke-key", p.body, p.header)
		require.Equal(t, http.StatusOK, status, "%s: answer %s", p.name, answer)
		wantSamples += p.samples
	}

	var got profilesSummary
	require.Eventually(t, func() bool {
		pds, err := readJSONLines(out)
		require.NoError(t, err)
		got = summarize(pds...)
		return got.SampleEvents >= wantSamples
	}, 30*time.Second, 200*time.Millisecond, "file exporter output never reached %d samples", wantSamples)

	assert.Equal(t, wantSamples, got.SampleEvents, "samples written vs samples posted")
	assert.Len(t, got.Resources, len(cases), "one resource per posted chunk")
	assert.True(t, got.Functions[generated.Function], "function %q missing from %v", generated.Function, got.Functions)
	assert.True(t, got.hasResource(string(semconv.ServiceVersionKey), generated.Release), "release: %v", got.Resources)
	assert.True(t, got.hasResource(string(semconv.DeploymentEnvironmentNameKey), generated.Environment), "environment: %v", got.Resources)
	for id, name := range generated.Threads {
		assert.Equal(t, name, got.Threads[id], "thread %s", id)
	}
}

// exampleEnv holds a harmless value for every environment variable the
// configurations reference. A configuration that references a variable not
// listed here fails the test, so a new one cannot slip in undocumented.
var exampleEnv = map[string]string{
	"SENTRY_DSN":             "https://0123456789abcdef0123456789abcdef@o0.ingest.sentry.invalid/42",
	"SENTRY_PUBLIC_KEY":      "0123456789abcdef0123456789abcdef",
	"SENTRY_QUEUE_DIR":       "", // set per test to a temporary directory
	"PROFILES_OTLP_ENDPOINT": "http://127.0.0.1:4040",
	"OTLP_ENDPOINT":          "http://127.0.0.1:4318",
	"SENTRY_RELEASE":         "example-app@1.0.0",
	"SENTRY_ENVIRONMENT":     "example",
	"SENTRY_UPSTREAM":        "https://o0.ingest.sentry.invalid",
	"SENTRY_OTLP_URL":        "https://o0.ingest.sentry.invalid/api/42/integration/otlp",
}

var envReference = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)`)

// TestCollectorValidatesConfigs runs `validate` of the built collector on
// config.yaml and every configuration under examples/, and checks that
// validate does reject a broken one, so that a pass means something.
func TestCollectorValidatesConfigs(t *testing.T) {
	bin := requireBinary(t)
	root := repoRoot(t)
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, examples, "no example configurations found")
	configs := append([]string{filepath.Join(root, "config.yaml")}, examples...)

	broken := filepath.Join(t.TempDir(), "broken.yaml")
	require.NoError(t, os.WriteFile(broken, []byte(`receivers:
  sentryprofile:
    max_items_per_envelope: -1
exporters:
  debug: {}
service:
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [debug]
`), 0o600))

	tests := []struct {
		config  string
		wantErr string // empty: must validate
	}{
		{config: broken, wantErr: "max_items_per_envelope"},
	}
	for _, c := range configs {
		tests = append(tests, struct {
			config  string
			wantErr string
		}{config: c})
	}
	for _, tt := range tests {
		rel, err := filepath.Rel(root, tt.config)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(tt.config)
		}
		t.Run(rel, func(t *testing.T) {
			text, err := os.ReadFile(tt.config)
			require.NoError(t, err)
			env := append(os.Environ(), "SENTRY_QUEUE_DIR="+t.TempDir())
			var missing []string
			for _, m := range envReference.FindAllStringSubmatch(string(text), -1) {
				v, ok := exampleEnv[m[1]]
				if !ok {
					missing = append(missing, m[1])
					continue
				}
				if m[1] != "SENTRY_QUEUE_DIR" {
					env = append(env, m[1]+"="+v)
				}
			}
			sort.Strings(missing)
			require.Empty(t, missing, "%s references variables the test has no dummy value for; add them to exampleEnv and document them in the file", rel)

			cmd := exec.Command(bin, "validate", "--config", tt.config, profilesGate)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if tt.wantErr == "" {
				require.NoError(t, err, "validate %s:\n%s", rel, out)
				return
			}
			require.Error(t, err, "validate accepted %s:\n%s", rel, out)
			assert.Contains(t, string(out), tt.wantErr, "validate %s", rel)
		})
	}
}

// TestSentryprofPprof converts envelopes with the built sentryprof and checks
// that `go tool pprof -top` reads the result and shows the envelope's
// functions: the flame-graph path the README describes.
func TestSentryprofPprof(t *testing.T) {
	bin := os.Getenv(envSentryprof)
	if bin == "" {
		t.Skipf("%s is not set: this test runs the built sentryprof; run `make smoke`", envSentryprof)
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go tool pprof needs the go command on PATH")

	dir := t.TempDir()
	generated, err := newChunkEnvelope(generatedChunk{
		Function: "pprofGeneratedLeaf", Threads: map[string]string{"7": "MainThread"}, PerThread: 20,
	})
	require.NoError(t, err)
	generatedPath := filepath.Join(dir, "generated.envelope")
	require.NoError(t, os.WriteFile(generatedPath, generated, 0o600))

	tests := []struct {
		name     string
		envelope string
		function string
	}{
		{"generated V2 chunk", generatedPath, "pprofGeneratedLeaf"},
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), "..", "shared", "fixtures", "sentry")); err == nil {
		for _, path := range fixtures.Files(t, "v2_profile_chunk_1.envelope", "v1_profile_with_transaction_1.envelope") {
			// Every Python profile has the interpreter's thread bootstrap on
			// its stacks.
			tests = append(tests, struct {
				name     string
				envelope string
				function string
			}{filepath.Base(path), path, "_bootstrap"})
		}
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("p%d.pb.gz", i))
			conv, err := exec.Command(bin, "convert", "-in", tt.envelope, "-out", out).CombinedOutput()
			require.NoError(t, err, "sentryprof convert:\n%s", conv)

			top, err := exec.Command(goTool, "tool", "pprof", "-top", out).CombinedOutput()
			require.NoError(t, err, "go tool pprof -top:\n%s", top)
			assert.Contains(t, string(top), tt.function, "pprof -top output")
		})
	}
}

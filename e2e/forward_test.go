package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
)

// TestForwardRealSDK runs real SDKs against a collector that forwards to a
// stand-in Sentry: Sentry gets every envelope the SDK sent, byte for byte
// once decompressed, at the same path with the same auth and the same
// User-Agent (none where the SDK sent none), and the profiles also reach the
// file exporter. The node11 cases send profiling, a captured exception, a
// transaction and a session; "spooled" goes through the forward spool in
// file_storage: the SDK is answered once a request is stored, and Sentry gets
// it from the background sender. @sentry/node 9 sends no User-Agent at all.
func TestForwardRealSDK(t *testing.T) {
	requireE2E(t)
	cases := []struct {
		name      string
		client    string
		env       []string
		spooled   bool
		wantItems []string
		// userAgent is the User-Agent header the SDK sends, "" for none:
		// the cases check both that a present one arrives unchanged and
		// that an absent one stays absent.
		userAgent string
	}{
		{name: "direct", client: "node11-static", env: []string{"E2E_EVENTS=1"},
			wantItems: []string{"event", "transaction", "session", "profile_chunk"}, userAgent: "sentry.javascript.node/11.1.0"},
		{name: "spooled", client: "node11-static", env: []string{"E2E_EVENTS=1"}, spooled: true,
			wantItems: []string{"event", "transaction", "session", "profile_chunk"}, userAgent: "sentry.javascript.node/11.1.0"},
		{name: "no-user-agent", client: "node9-v2",
			wantItems: []string{"transaction", "profile_chunk"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client, ok := sdkClientByName(tc.client)
			require.True(t, ok, tc.client)
			upstream := newFakeSentry(t)
			storageDir := t.TempDir()
			run := runSDK(t, client, sdkRunOptions{
				Env:    tc.env,
				Config: func(a collectorAddrs) string { return forwardingConfig(a, upstream.addr, tc.spooled, storageDir) },
			})

			posts := run.Posts()
			require.NotEmpty(t, posts)
			var wantUA []string
			if tc.userAgent != "" {
				wantUA = []string{tc.userAgent}
			}
			types := map[string]int{}
			for _, p := range posts {
				items, err := parseEnvelope(p.Body)
				require.NoError(t, err)
				for _, it := range items {
					types[it.Type]++
				}
				require.Equal(t, wantUA, p.Header.Values("User-Agent"), "the User-Agent %s sends", tc.client)
			}
			for _, want := range tc.wantItems {
				assert.Positive(t, types[want], "the SDK sent no %s item: %v", want, types)
			}

			// The spool delivers after the SDK's answer.
			require.Eventually(t, func() bool { got, _ := upstream.got(); return len(got) >= len(posts) },
				10*time.Second, 50*time.Millisecond)
			got, errs := upstream.got()
			require.Empty(t, errs)
			require.Len(t, got, len(posts), "Sentry got one request per request the SDK made")
			checkForwarded(t, posts, got)
			assert.Equal(t, run.Sent.Samples(), run.Got.SampleEvents, "the profiles also reached the file exporter")
			t.Logf("forwarded %d requests (items %v); %d samples reached the pipeline", len(got), types, run.Got.SampleEvents)
		})
	}
}

// forwardingConfig is sdkCollectorConfig with forwarding to upstream, through
// a file_storage spool in storageDir when spooled.
func forwardingConfig(a collectorAddrs, upstream string, spooled bool, storageDir string) string {
	forward := "    forward:\n      endpoint: http://" + upstream + "\n"
	config := sdkCollectorConfig(a)
	if spooled {
		forward += "      storage: file_storage\n"
		config = "extensions:\n  file_storage:\n    directory: " + storageDir + "\n" +
			strings.Replace(config, "service:\n", "service:\n  extensions: [file_storage]\n", 1)
	}
	return strings.Replace(config, "    cors:\n", forward+"    cors:\n", 1)
}

// checkForwarded matches each request Sentry got to one the SDK sent (path
// and decompressed body) and checks that it carried the SDK's auth and
// exactly the SDK's User-Agent header: the same values, or none.
func checkForwarded(t *testing.T, posts, got []recordedRequest) {
	t.Helper()
	sent := map[string][]recordedRequest{}
	for _, p := range posts {
		key := p.Path + "|" + string(p.Body)
		sent[key] = append(sent[key], p)
		assert.Equal(t, http.StatusOK, p.Status, "the SDK got Sentry's answer")
	}
	for _, g := range got {
		key := g.Path + "|" + string(g.Body)
		if !assert.NotEmpty(t, sent[key], "Sentry got a request the SDK did not send: %s", g.Path) {
			continue
		}
		p := sent[key][0]
		sent[key] = sent[key][1:]
		assert.Equal(t, sdkPublicKey, g.Query.Get("sentry_key"), "the SDK's auth goes with it")
		assert.Equal(t, p.Header.Values("User-Agent"), g.Header.Values("User-Agent"),
			"User-Agent upstream vs the SDK's (%s)", g.Path)
	}
}

// TestCollectorForwardSpoolSurvivesRestart runs the built collector with forward
// spooling into file_storage while the stand-in Sentry is down: the SDK is
// answered 200, the collector is stopped with the requests spooled, and a
// new collector on the same storage delivers each of them once, in order,
// byte for byte, when Sentry is back.
func TestCollectorForwardSpoolSurvivesRestart(t *testing.T) {
	bin := requireBinary(t)
	var (
		mu       sync.Mutex
		up       bool
		attempts int
		accepted [][]byte
	)
	upstream := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if !up || err != nil {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		accepted = append(accepted, body)
		_, _ = w.Write([]byte("{}"))
	}))
	addr := testnet.FreeLoopbackAddr(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	storageDir := filepath.Join(dir, "spool")
	require.NoError(t, os.Mkdir(storageDir, 0o700))
	require.NoError(t, os.WriteFile(config, []byte(`extensions:
  file_storage:
    directory: `+storageDir+`
receivers:
  sentryprofile:
    endpoint: `+addr+`
    forward:
      endpoint: http://`+upstream+`
      storage: file_storage
exporters:
  debug:
    verbosity: basic
service:
  extensions: [file_storage]
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [sentryprofile]
      exporters: [debug]
`), 0o600))

	var sent [][]byte
	collector := startCollector(t, bin, nil, "--config", config, profilesGate)
	collector.waitListening(t, addr)
	for i := range 3 {
		body := []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04d` + strconv.Itoa(i) + `"}` + "\n" +
			`{"type":"event"}` + "\n" + `{"message":"spooled ` + strconv.Itoa(i) + `"}` + "\n")
		status, answer := postEnvelope(t, addr, "42", sdkPublicKey, body, nil)
		require.Equal(t, http.StatusOK, status, "stored, so the SDK is done: %s", answer)
		sent = append(sent, body)
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return attempts > 0 },
		10*time.Second, 50*time.Millisecond, "the spool tries Sentry while it is down")
	collector.stop(t)
	require.NoError(t, collector.err, collector.output.String())

	mu.Lock()
	up = true
	mu.Unlock()
	collector = startCollector(t, bin, nil, "--config", config, profilesGate)
	collector.waitListening(t, addr)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(accepted) >= len(sent) },
		30*time.Second, 50*time.Millisecond, "the restarted collector delivers what was spooled")
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, sent, accepted, "each request once, in order, byte for byte")
	t.Logf("%d requests spooled across a restart; %d delivery attempts", len(sent), attempts)
}

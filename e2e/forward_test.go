package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForwardRealSDK runs @sentry/node 11 with profiling, a captured
// exception, a transaction and a session against a collector that forwards
// to a stand-in Sentry: Sentry gets every envelope the SDK sent, byte for
// byte once decompressed, at the same path with the same auth, and the
// profiles also reach the file exporter.
func TestForwardRealSDK(t *testing.T) {
	requireE2E(t)
	client, ok := sdkClientByName("node11-static")
	require.True(t, ok)
	upstream := newFakeSentry(t)
	upstreamAddr := upstream.addr
	run := runSDK(t, client, sdkRunOptions{
		Env: []string{"E2E_EVENTS=1"},
		Config: func(a collectorAddrs) string {
			return strings.Replace(sdkCollectorConfig(a), "    cors:\n",
				"    forward:\n      endpoint: http://"+upstreamAddr+"\n    cors:\n", 1)
		},
	})

	posts := run.Posts()
	require.NotEmpty(t, posts)
	types := map[string]int{}
	for _, p := range posts {
		items, err := parseEnvelope(p.Body)
		require.NoError(t, err)
		for _, it := range items {
			types[it.Type]++
		}
	}
	for _, want := range []string{"event", "transaction", "session", "profile_chunk"} {
		assert.Positive(t, types[want], "the SDK sent no %s item: %v", want, types)
	}

	got, errs := upstream.got()
	require.Empty(t, errs)
	require.Len(t, got, len(posts), "Sentry got one request per request the SDK made")
	sent := map[string]int{}
	for _, p := range posts {
		sent[p.Path+"|"+string(p.Body)]++
		assert.Equal(t, http.StatusOK, p.Status, "the SDK got Sentry's answer")
	}
	for _, g := range got {
		key := g.Path + "|" + string(g.Body)
		assert.Positive(t, sent[key], "Sentry got a request the SDK did not send: %s", g.Path)
		sent[key]--
		assert.Equal(t, sdkPublicKey, g.Query.Get("sentry_key"), "the SDK's auth goes with it")
	}
	assert.Equal(t, run.Sent.Samples(), run.Got.SampleEvents, "the profiles also reached the file exporter")
	t.Logf("forwarded %d requests (items %v); %d samples reached the pipeline", len(got), types, run.Got.SampleEvents)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
)

// TestConvertMatchesReceiver pins that sentryprof convert and the receiver
// read an envelope by the same rules: for every shared fixture envelope (the
// captured ones, the recorded gzip'd request bodies, and every JSON payload
// fixture wrapped in the envelope its SDK would send), under both validation
// modes, the CLI's OTLP output equals what the receiver hands its pipeline,
// and an envelope the CLI refuses gives the pipeline no profile. Every
// fixture holds one profile item, so refusing the envelope (the CLI) and
// dropping its item (the receiver) are the same outcome.
func TestConvertMatchesReceiver(t *testing.T) {
	dir := fixtures.Dir(t)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	type input struct {
		name string
		body []byte // what the CLI reads and the receiver is posted
		gzip bool
	}
	var inputs []input
	for _, e := range entries {
		name := e.Name()
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		switch {
		case strings.HasSuffix(name, ".request.gz"):
			inputs = append(inputs, input{name: name, body: data, gzip: true})
		case isEnvelope(data):
			inputs = append(inputs, input{name: name, body: data})
		case strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".request_headers.json"):
			inputs = append(inputs, input{name: name + " (wrapped)", body: wrapPayload(t, data)})
		}
	}
	require.NotEmpty(t, inputs)

	accepted := 0
	for _, validation := range []string{"lenient", "relay"} {
		for _, in := range inputs {
			t.Run(validation+"/"+in.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "in")
				require.NoError(t, os.WriteFile(path, in.body, 0o600))
				out := filepath.Join(t.TempDir(), "out.json")
				r := runCLI(t, nil, "convert", "-in", path, "-out", out, "-format", formatOTLPJSON,
					"-validation", validation, "-project", "42", "-service", "checkout")

				sink := new(consumertest.ProfilesSink)
				url := startSentryReceiver(t, sink, validation)
				req, err := http.NewRequest(http.MethodPost, url+"/api/42/envelope/?sentry_key=0123456789abcdef0123456789abcdef", bytes.NewReader(in.body))
				require.NoError(t, err)
				if in.gzip {
					req.Header.Set("Content-Encoding", "gzip")
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())

				if r.code != exitOK {
					t.Logf("the CLI refuses it: %s", strings.TrimSpace(r.stderr))
					received := 0
					for _, pd := range sink.AllProfiles() {
						received += pd.ProfileCount()
					}
					assert.Zero(t, received, "the receiver drops what the CLI refuses")
					return
				}
				accepted++
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.Len(t, sink.AllProfiles(), 1, "the receiver delivers what the CLI converts")
				fromReceiver, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(sink.AllProfiles()[0])
				require.NoError(t, err)
				fromCLI, err := os.ReadFile(out)
				require.NoError(t, err)
				assert.JSONEq(t, string(fromCLI), string(fromReceiver))
			})
		}
	}
	assert.Positive(t, accepted, "some fixtures convert")
}

// fixedSentAt is the sent_at of wrapped payloads: a V1 profile without
// timestamp and an Android trace start there in both readers, instead of at
// two different "now"s.
const fixedSentAt = "2026-11-24T12:00:00Z"

// wrapPayload puts a profile payload in the envelope its SDK would send: a
// chunk (version 2 or a chunk_id) as profile_chunk with its platform header,
// anything else as a V1 profile item.
func wrapPayload(t *testing.T, payload []byte) []byte {
	t.Helper()
	var p struct {
		Version  string `json:"version"`
		ChunkID  string `json:"chunk_id"`
		Platform string `json:"platform"`
	}
	_ = json.Unmarshal(payload, &p) // what does not decode is wrapped as a profile, and refused by both
	h := envelope.ItemHeader{Type: itemrules.ItemTypeProfile, Length: int64(len(payload))}
	if p.Version == "2" || p.ChunkID != "" {
		h.Type, h.Platform = itemrules.ItemTypeProfileChunk, p.Platform
	}
	return envelope.AppendItem([]byte(`{"sent_at":"`+fixedSentAt+`"}`+"\n"), h, payload)
}

// startSentryReceiver starts a sentryprofile receiver configured as convert
// runs (service checkout, the validation mode; chunks are translated at once,
// not held for their spans) and returns its base URL.
func startSentryReceiver(t *testing.T, sink *consumertest.ProfilesSink, validation string) string {
	t.Helper()
	f := sentryprofilereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryprofilereceiver.Config)
	cfg.ServerConfig.NetAddr.Endpoint = testnet.FreeLoopbackAddr(t)
	cfg.ServiceName = "checkout"
	cfg.Validation = sentryprofilereceiver.Validation(validation)
	cfg.Links.Wait = 0
	require.NoError(t, cfg.Validate())
	r, err := f.CreateProfiles(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	url := "http://" + cfg.ServerConfig.NetAddr.Endpoint
	// The listener is bound by Start; wait until it answers.
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", cfg.ServerConfig.NetAddr.Endpoint)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return url
}

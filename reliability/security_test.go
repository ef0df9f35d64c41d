package reliability

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/testnet"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// TestCORSClosedByDefault sends a browser's preflight to a receiver with the
// default configuration (no CORS) and to one that allows an origin: only the
// second may answer with Access-Control-Allow-Origin.
func TestCORSClosedByDefault(t *testing.T) {
	const origin = "https://shop.example.com"
	tests := []struct {
		name      string
		config    func(*sentryprofilereceiver.Config)
		wantAllow string
	}{
		{name: "default config", wantAllow: ""},
		{
			name: "origin allowed",
			config: func(c *sentryprofilereceiver.Config) {
				c.ServerConfig.CORS = configoptional.Some(confighttp.CORSConfig{AllowedOrigins: []string{origin}})
			},
			wantAllow: origin,
		},
		{
			name: "another origin allowed",
			config: func(c *sentryprofilereceiver.Config) {
				c.ServerConfig.CORS = configoptional.Some(confighttp.CORSConfig{AllowedOrigins: []string{"https://other.example.com"}})
			},
			wantAllow: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rut := startReceiver(t, &recordingConsumer{}, tt.config)
			preflight, err := http.NewRequest(http.MethodOptions, envelopeURL(rut.url), nil)
			require.NoError(t, err)
			preflight.Header.Set("Origin", origin)
			preflight.Header.Set("Access-Control-Request-Method", http.MethodPost)
			preflight.Header.Set("Access-Control-Request-Headers", "content-type")
			res := send(t, preflight)
			assert.Equal(t, tt.wantAllow, res.header.Get("Access-Control-Allow-Origin"), "preflight, status %d", res.status)

			// The browser's POST itself: without CORS it is not readable
			// cross-origin, but the envelope is still accepted, as by Sentry.
			post, err := http.NewRequest(http.MethodPost, envelopeURL(rut.url), bytes.NewReader(envelopeOf(`{}`, chunkItem(validChunk))))
			require.NoError(t, err)
			post.Header.Set("Origin", origin)
			post.Header.Set("Content-Type", "text/plain;charset=UTF-8")
			res = send(t, post)
			assert.Equal(t, http.StatusOK, res.status)
			assert.Equal(t, tt.wantAllow, res.header.Get("Access-Control-Allow-Origin"), "POST")
		})
	}
}

// TestEnvelopeDSNCannotRedirect points an envelope's dsn at a listener of
// the test: the receiver authenticates with it but never connects to it, and
// the data goes down the configured pipeline as usual.
func TestEnvelopeDSNCannotRedirect(t *testing.T) {
	trap, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer trap.Close()
	var dialed atomic.Int64
	go func() {
		for {
			c, err := trap.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()

	down := &recordingConsumer{}
	rut := startReceiver(t, down, nil)
	for _, dsn := range []string{
		"http://" + testKey + "@" + trap.Addr().String() + "/42",
		"http://" + testKey + ":" + legacySecret + "@" + trap.Addr().String() + "/prefix/42",
	} {
		body := envelopeOf(`{"dsn":"`+dsn+`"}`, chunkItem(validChunk))
		req, err := http.NewRequest(http.MethodPost, noAuthURL(rut.url), bytes.NewReader(body))
		require.NoError(t, err)
		res := send(t, req)
		assert.Equal(t, http.StatusOK, res.status, res.body)
	}
	time.Sleep(100 * time.Millisecond) // room for a connection that should not come
	assert.Zero(t, dialed.Load(), "the receiver connected to the envelope's dsn host")
	assert.Equal(t, 2*samplesPerProfile, down.deliveredSamples())
	requireNoSecretsOrRequestData(t, rut, response{})
}

// TestExporterNeverLogsTheDSNKey runs the exporter at debug level against a
// Sentry that refuses, fails, or is not there, and checks that neither the
// returned errors nor any log line holds the DSN's public key or secret.
func TestExporterNeverLogsTheDSNKey(t *testing.T) {
	const (
		publicKey = "feedfacefeedfacefeedfacefeedface"
		secretKey = "5ec2e7005ec2e7005ec2e7005ec2e700"
	)
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
		wantErr string
	}{
		{name: "403 bad key", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"detail":"invalid api key"}`))
		}, wantErr: "HTTP 403"},
		{name: "500", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}, wantErr: "HTTP 500"},
		{name: "429 storm", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Sentry-Rate-Limits", "60:profile_chunk:key")
			w.WriteHeader(http.StatusTooManyRequests)
		}, wantErr: "HTTP 429"},
		{name: "connection refused", wantErr: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := testnet.FreeLoopbackAddr(t)
			if tt.handler != nil {
				srv := httptest.NewUnstartedServer(tt.handler)
				l, err := net.Listen("tcp", host)
				require.NoError(t, err)
				srv.Listener = l
				srv.Start()
				defer srv.Close()
			}
			factory := sentryprofileexporter.NewFactory()
			cfg := factory.CreateDefaultConfig().(*sentryprofileexporter.Config)
			cfg.DSN = configopaque.String("http://" + publicKey + ":" + secretKey + "@" + host + "/42")
			// Synchronous and without retries, so the error comes back here.
			cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
			cfg.RetryConfig.Enabled = false
			require.NoError(t, cfg.Validate())

			core, logs := observer.New(zapcore.DebugLevel)
			set := exportertest.NewNopSettings(factory.Type())
			set.ID = component.NewID(factory.Type())
			set.Logger = zap.New(core)
			exp, err := factory.CreateProfiles(context.Background(), set, cfg)
			require.NoError(t, err)
			require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
			defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

			err = exp.ConsumeProfiles(context.Background(), profilesOf(t, validChunk))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprint(cfg)}
			for _, e := range logs.All() {
				texts = append(texts, e.Message+" "+fmt.Sprint(e.ContextMap()))
			}
			for _, text := range texts {
				assert.NotContains(t, text, publicKey)
				assert.NotContains(t, text, secretKey)
			}
		})
	}
}

// profilesOf converts a hand-written chunk with the translator, as the
// receiver would.
func profilesOf(t *testing.T, payload string) pprofile.Profiles {
	t.Helper()
	p, err := sentry.DecodeProfile([]byte(payload))
	require.NoError(t, err)
	sentry.Normalize(p)
	require.NoError(t, sentry.Validate(p, sentry.DefaultLimits()))
	b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{ProjectID: testProject})
	require.Equal(t, samplesPerProfile, b.Add(profilesin.DecodedProfile{Profile: p, Payload: []byte(payload)}))
	return b.Profiles()
}

// TestConfigErrorsDoNotQuoteKeys feeds invalid key and DSN settings to both
// components' Validate: the errors name the setting, never its value.
func TestConfigErrorsDoNotQuoteKeys(t *testing.T) {
	const key = "0ddba11c0ffee0ddba11c0ffee0ddba1"
	rcfg := sentryprofilereceiver.NewFactory().CreateDefaultConfig().(*sentryprofilereceiver.Config)
	rcfg.PublicKeys = []configopaque.String{key + " trailing", ""}
	rerr := rcfg.Validate()
	require.Error(t, rerr)
	assert.NotContains(t, rerr.Error(), key)

	ecfg := sentryprofileexporter.NewFactory().CreateDefaultConfig().(*sentryprofileexporter.Config)
	ecfg.DSN = configopaque.String("ftp://" + key + ":" + legacySecret + "@sentry.example.com/not-a-project")
	eerr := ecfg.Validate()
	require.Error(t, eerr)
	assert.NotContains(t, eerr.Error(), key)
	assert.NotContains(t, eerr.Error(), legacySecret)
	assert.NotContains(t, fmt.Sprintf("%v", ecfg.DSN), key, "configopaque prints [REDACTED]")
}

package sentryprofilereceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := createDefaultConfig().(*Config)
	custom.ServerConfig.NetAddr.Endpoint = "0.0.0.0:9000"
	custom.ServerConfig.MaxRequestBodySize = 100 << 20
	custom.ServerConfig.CORS = configoptional.Some(confighttp.CORSConfig{
		AllowedOrigins: []string{"https://app.example.com"},
		ExposedHeaders: []string{"Retry-After", "X-Sentry-Rate-Limits"},
	})
	custom.PublicKeys = []configopaque.String{"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"}
	custom.Projects = []string{"42", "4505"}
	custom.ServiceName = "checkout"
	custom.IncludeOriginalPayload = true
	custom.GroupSamples = true
	custom.MaxItemsPerEnvelope = 50
	custom.MaxProfileItemSize = 10 << 20
	custom.RetryAfter = 90 * time.Second
	custom.MaxConcurrentEnvelopes = 4
	custom.Validation = ValidationRelay
	custom.Links = LinksConfig{Enabled: true, Wait: 2 * time.Second, MaxHeldChunks: 10, MaxHeldBytes: 1 << 20,
		SpanTTL: 90 * time.Second, MaxSpans: 5000, MaxSpansPerProfiler: 500, MaxProfilers: 100}

	tests := []struct {
		id               component.ID
		want             *Config
		wantErr          []string
		wantUnmarshalErr string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig().(*Config)},
		{id: component.NewIDWithName(metadata.Type, "custom"), want: custom},
		{
			id: component.NewIDWithName(metadata.Type, "invalid"),
			wantErr: []string{
				`endpoint "localhost" must be host:port`,
				"max_profile_item_size must be positive, got 0",
				`projects[0] = "my-project"`,
				"public_keys[0] is empty",
				`validation must be "lenient" or "relay", got "strict"`,
				"links::wait (5m0s) must be shorter than links::span_ttl (3m0s)",
				"links::max_spans must be positive, got 0",
			},
		},
		{id: component.NewIDWithName(metadata.Type, "typo"), wantUnmarshalErr: "public_key"},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			err = sub.Unmarshal(cfg)
			if tt.wantUnmarshalErr != "" {
				require.ErrorContains(t, err, tt.wantUnmarshalErr)
				return
			}
			require.NoError(t, err)
			err = confmap.Validate(cfg)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, want := range tt.wantErr {
					assert.ErrorContains(t, err, want)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, "localhost:8000", cfg.ServerConfig.NetAddr.Endpoint)
	assert.Equal(t, int64(200<<20), cfg.ServerConfig.MaxRequestBodySize, "Relay's envelope limit")
	assert.Equal(t, int64(50<<20), cfg.MaxProfileItemSize, "Relay's profile item limit")
	assert.Equal(t, 1000, cfg.MaxItemsPerEnvelope)
	assert.Equal(t, 60*time.Second, cfg.RetryAfter)
	assert.Equal(t, 16, cfg.MaxConcurrentEnvelopes)
	assert.Equal(t, 2*time.Minute, cfg.ServerConfig.ReadTimeout, "a trickled body cannot hold a connection for ever")
	assert.False(t, cfg.IncludeOriginalPayload)
	assert.Empty(t, cfg.PublicKeys, "any key is accepted by default")
	assert.Empty(t, cfg.Projects, "any project is accepted by default")
	assert.False(t, cfg.ServerConfig.CORS.HasValue(), "CORS is closed by default")
	require.NoError(t, cfg.Validate())
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // empty: valid
	}{
		{name: "default", mutate: func(*Config) {}},
		{name: "ipv6 endpoint", mutate: func(c *Config) { c.ServerConfig.NetAddr.Endpoint = "[::1]:8000" }},
		{name: "named port", mutate: func(c *Config) { c.ServerConfig.NetAddr.Endpoint = "localhost:http" }},
		{name: "unix socket", mutate: func(c *Config) {
			c.ServerConfig.NetAddr.Transport = "unix"
			c.ServerConfig.NetAddr.Endpoint = "/run/sentry.sock"
		}},
		{name: "empty endpoint", mutate: func(c *Config) { c.ServerConfig.NetAddr.Endpoint = "" }, wantErr: "endpoint must be set"},
		{name: "endpoint without port", mutate: func(c *Config) { c.ServerConfig.NetAddr.Endpoint = "localhost" }, wantErr: "must be host:port"},
		{name: "port out of range", mutate: func(c *Config) { c.ServerConfig.NetAddr.Endpoint = "localhost:70000" }, wantErr: `port "70000" is not a number between 0 and 65535`},
		{name: "zero body size", mutate: func(c *Config) { c.ServerConfig.MaxRequestBodySize = 0 }, wantErr: "max_request_body_size must be positive"},
		{name: "negative item size", mutate: func(c *Config) { c.MaxProfileItemSize = -1 }, wantErr: "max_profile_item_size must be positive, got -1"},
		{name: "item larger than body", mutate: func(c *Config) { c.MaxProfileItemSize = 300 << 20 }, wantErr: "exceeds max_request_body_size"},
		{name: "zero items", mutate: func(c *Config) { c.MaxItemsPerEnvelope = 0 }, wantErr: "max_items_per_envelope must be positive"},
		{name: "sub-second retry", mutate: func(c *Config) { c.RetryAfter = 500 * time.Millisecond }, wantErr: "retry_after must be at least 1s"},
		{name: "no envelope slots", mutate: func(c *Config) { c.MaxConcurrentEnvelopes = 0 }, wantErr: "max_concurrent_envelopes must be positive"},
		{name: "relay validation", mutate: func(c *Config) { c.Validation = ValidationRelay }},
		{name: "no validation", mutate: func(c *Config) { c.Validation = "" }, wantErr: `validation must be "lenient" or "relay", got ""`},
		{name: "numeric projects", mutate: func(c *Config) { c.Projects = []string{"1", "18446744073709551615"} }},
		{name: "project name", mutate: func(c *Config) { c.Projects = []string{"42", "backend"} }, wantErr: `projects[1] = "backend"`},
		{name: "project zero", mutate: func(c *Config) { c.Projects = []string{"0"} }, wantErr: `projects[0] = "0"`},
		{name: "project leading zero", mutate: func(c *Config) { c.Projects = []string{"042"} }, wantErr: `projects[0] = "042"`},
		{name: "project overflow", mutate: func(c *Config) { c.Projects = []string{"18446744073709551616"} }, wantErr: "projects[0]"},
		{name: "keys", mutate: func(c *Config) { c.PublicKeys = []configopaque.String{"abc", "0123456789abcdef0123456789abcdef"} }},
		{name: "empty key", mutate: func(c *Config) { c.PublicKeys = []configopaque.String{"abc", ""} }, wantErr: "public_keys[1] is empty"},
		{name: "upstream", mutate: forwardTo("https://o123.ingest.us.sentry.io")},
		{name: "upstream under a path prefix (self-hosted)", mutate: forwardTo("https://sentry.example.com/sentry")},
		{name: "upstream with a query", mutate: forwardTo("https://sentry.example.com/?x=1"), wantErr: "without query or credentials"},
		{name: "upstream with credentials", mutate: forwardTo("https://key@sentry.example.com"), wantErr: "without query or credentials"},
		{name: "upstream is an API path", mutate: forwardTo("https://sentry.example.com/api/42/envelope/"), wantErr: "not an API path"},
		{name: "upstream not http", mutate: forwardTo("ftp://sentry.example.com"), wantErr: "must be an http or https URL"},
		{name: "key with space", mutate: func(c *Config) { c.PublicKeys = []configopaque.String{"abc def"} }, wantErr: "public_keys[0] contains whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.mutate(cfg)
			err := cfg.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestConfigValidateNeverPrintsKeys(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.PublicKeys = []configopaque.String{"secret key"}
	err := cfg.Validate()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secret")
}

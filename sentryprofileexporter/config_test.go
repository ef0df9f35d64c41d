package sentryprofileexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
)

const exampleDSN = "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42"

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestLoadConfig(t *testing.T) {
	t.Run("minimal", func(t *testing.T) {
		cfg := loadConfig(t, "")
		require.NoError(t, confmap.Validate(cfg))
		assert.Equal(t, configopaque.String(exampleDSN), cfg.DSN)
		assert.Equal(t, defaultPlatform, cfg.Platform)
		assert.InDelta(t, 101.0, cfg.SampleRateHz, 0)
		assert.Equal(t, configcompression.TypeGzip, cfg.ClientConfig.Compression, "gzip by default")
		assert.Equal(t, 30*time.Second, cfg.ClientConfig.Timeout)
		assert.Equal(t, "service.name", cfg.Routing.Attribute)
		assert.True(t, cfg.QueueConfig.HasValue(), "sending_queue on by default")
		assert.True(t, cfg.RetryConfig.Enabled)
		assert.Equal(t, 60*time.Second, cfg.ChunkWindow, "a Sentry SDK's chunk length")
		assert.Empty(t, cfg.DefaultRelease)
		assert.Empty(t, cfg.DefaultEnvironment)
		batch := cfg.QueueConfig.Get().Batch
		require.True(t, batch.HasValue(), "requests are batched in the queue by default, so that chunks are long")
		assert.Equal(t, 50*time.Second, batch.Get().FlushTimeout)
		assert.Equal(t, exporterhelper.RequestSizerTypeItems, batch.Get().Sizer)
	})
	t.Run("full", func(t *testing.T) {
		cfg := loadConfig(t, "full")
		require.NoError(t, confmap.Validate(cfg))
		assert.Equal(t, "python", cfg.Platform)
		assert.InDelta(t, 99.0, cfg.SampleRateHz, 0)
		assert.Equal(t, "checkout@2.4.1", cfg.DefaultRelease)
		assert.Equal(t, "production", cfg.DefaultEnvironment)
		assert.Equal(t, 30*time.Second, cfg.ChunkWindow)
		assert.Equal(t, 10*time.Second, cfg.ClientConfig.Timeout)
		assert.Equal(t, configcompression.TypeZstd, cfg.ClientConfig.Compression)
		v, ok := cfg.ClientConfig.Headers.Get("X-Team")
		assert.True(t, ok)
		assert.Equal(t, configopaque.String("profiling"), v)
		assert.True(t, cfg.ClientConfig.TLS.InsecureSkipVerify)
		assert.Equal(t, "deployment.environment.name", cfg.Routing.Attribute)
		assert.Len(t, cfg.Routing.DSNs, 2)
		assert.Equal(t, configopaque.String("https://fedcba9876543210fedcba9876543210@o1.ingest.sentry.io/43"), cfg.Routing.DSNs["staging"])
		assert.Equal(t, time.Second, cfg.RetryConfig.InitialInterval)
		assert.Equal(t, 10*time.Minute, cfg.RetryConfig.MaxElapsedTime)
		q := cfg.QueueConfig.Get()
		require.NotNil(t, q)
		assert.Equal(t, 2, q.NumConsumers)
		assert.Equal(t, int64(500), q.QueueSize)
		require.NotNil(t, q.StorageID)
		assert.Equal(t, "file_storage", q.StorageID.String())
		require.True(t, q.Batch.HasValue())
		assert.Equal(t, 20*time.Second, q.Batch.Get().FlushTimeout)
		assert.Equal(t, int64(100000), q.Batch.Get().MinSize)
	})
	t.Run("routing only", func(t *testing.T) {
		cfg := loadConfig(t, "routing_only")
		require.NoError(t, confmap.Validate(cfg))
		assert.Empty(t, cfg.DSN)
		assert.Equal(t, "service.name", cfg.Routing.Attribute, "the default attribute applies")
	})
	t.Run("batching disabled", func(t *testing.T) {
		cfg := loadConfig(t, "no_batch")
		require.NoError(t, confmap.Validate(cfg))
		require.True(t, cfg.QueueConfig.HasValue())
		assert.False(t, cfg.QueueConfig.Get().Batch.HasValue(), "each request is sent as it arrives")
	})
	t.Run("queue disabled", func(t *testing.T) {
		cfg := loadConfig(t, "no_queue")
		require.NoError(t, confmap.Validate(cfg))
		assert.False(t, cfg.QueueConfig.HasValue())
	})
}

func TestConfigValidate(t *testing.T) {
	const secret = "5ec2e75ec2e75ec2e75ec2e75ec2e7aa"
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // substring; empty means valid
	}{
		{name: "default DSN only", mutate: func(*Config) {}},
		{
			name:    "no DSN and no routing",
			mutate:  func(c *Config) { c.DSN = "" },
			wantErr: "dsn: required",
		},
		{
			name: "routing without default DSN",
			mutate: func(c *Config) {
				c.DSN = ""
				c.Routing.DSNs = map[string]configopaque.String{"checkout": exampleDSN}
			},
		},
		{
			name:    "endpoint is refused",
			mutate:  func(c *Config) { c.ClientConfig.Endpoint = "https://o1.ingest.sentry.io" },
			wantErr: "endpoint: not used by this exporter",
		},
		{
			name: "DSN without project",
			mutate: func(c *Config) {
				c.DSN = configopaque.String("https://0123456789abcdef:" + secret + "@o1.ingest.sentry.io/")
			},
			wantErr: "dsn: sentry dsn:",
		},
		{
			name:    "DSN is not a URL",
			mutate:  func(c *Config) { c.DSN = configopaque.String("not a dsn " + secret) },
			wantErr: "dsn: sentry dsn:",
		},
		{
			name: "bad routed DSN",
			mutate: func(c *Config) {
				c.Routing.DSNs = map[string]configopaque.String{"checkout": configopaque.String("ftp://key:" + secret + "@host")}
			},
			wantErr: "routing::dsns::checkout: sentry dsn:",
		},
		{
			name: "routing without attribute",
			mutate: func(c *Config) {
				c.Routing.Attribute = ""
				c.Routing.DSNs = map[string]configopaque.String{"checkout": exampleDSN}
			},
			wantErr: "routing::attribute: required",
		},
		{
			name:    "empty platform",
			mutate:  func(c *Config) { c.Platform = "" },
			wantErr: "platform: must not be empty",
		},
		{
			name:    "zero sample rate",
			mutate:  func(c *Config) { c.SampleRateHz = 0 },
			wantErr: "sample_rate_hz: must be a positive number",
		},
		{
			name:    "negative sample rate",
			mutate:  func(c *Config) { c.SampleRateHz = -5 },
			wantErr: "sample_rate_hz: must be a positive number",
		},
		{
			name:   "chunk window of Relay's limit",
			mutate: func(c *Config) { c.ChunkWindow = 66 * time.Second },
		},
		{
			name:    "chunk window over Relay's limit",
			mutate:  func(c *Config) { c.ChunkWindow = 67 * time.Second },
			wantErr: "chunk_window: must be between 1s and 1m6s",
		},
		{
			name:    "zero chunk window",
			mutate:  func(c *Config) { c.ChunkWindow = 0 },
			wantErr: "chunk_window: must be between 1s and 1m6s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.DSN = exampleDSN
			tt.mutate(cfg)
			err := confmap.Validate(cfg)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			assert.NotContains(t, err.Error(), secret, "a DSN secret leaked into a config error")
		})
	}
}

package symbolicationprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	defaults := func(mutate func(*Config)) *Config {
		c := createDefaultConfig().(*Config)
		mutate(c)
		return c
	}
	tests := []struct {
		name    string
		want    *Config
		wantErr []string
	}{
		{name: "", want: defaults(func(c *Config) { c.SourceMaps.Directories = []string{"testdata"} })},
		{name: "tuned", want: defaults(func(c *Config) {
			c.SourceMaps = SourceMapsConfig{Directories: []string{"/srv/sourcemaps", "/srv/more-sourcemaps"}, RescanInterval: 5 * time.Minute}
			c.ArtifactCacheBytes, c.FrameCacheBytes, c.MaxArtifactBytes = 1<<30, 16<<20, 64<<20
			c.MaxBatchWait = 250 * time.Millisecond
			c.Native.DebuginfodURLs, c.Native.CacheDirectory = []string{"https://debuginfod.example.org"}, "/var/cache/otelcol/debuginfod"
			c.Native.MaxConcurrentFetches, c.Native.MaxFetchesPerBatch = 8, 32
		})},
		{name: "nothing", wantErr: []string{"nothing to resolve with"}},
		{name: "empty_dir", wantErr: []string{"source_maps.directories[0] is empty"}},
		{name: "negative", wantErr: []string{"rescan_interval must not be negative", "frame_cache_bytes must be positive"}},
		{name: "unbounded_fetches", wantErr: []string{"max_batch_wait must be positive", "native.max_concurrent_fetches must be positive", "native.max_fetches_per_batch must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if len(tt.wantErr) > 0 {
				for _, w := range tt.wantErr {
					assert.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"errors"
	"fmt"
	"time"
)

// Config configures the symbolication processor: where each kind of
// artifact is found, and how much memory the caches may hold. A kind
// without directories is off; its frames pass untouched.
type Config struct {
	// SourceMaps resolves minified JavaScript.
	SourceMaps SourceMapsConfig `mapstructure:"source_maps"`
	// ArtifactCacheBytes bounds the parsed artifacts each kind keeps in
	// memory (least recently used go first).
	ArtifactCacheBytes int64 `mapstructure:"artifact_cache_bytes"`
	// FrameCacheBytes bounds the cache of resolved frames, which answers a
	// frame seen before without looking at its artifact.
	FrameCacheBytes int64 `mapstructure:"frame_cache_bytes"`
	// MaxArtifactBytes bounds one artifact file read from disk.
	MaxArtifactBytes int64 `mapstructure:"max_artifact_bytes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// SourceMapsConfig says where the source maps of JavaScript bundles are.
type SourceMapsConfig struct {
	// Directories hold the maps laid out like the bundles' URL paths
	// (https://example.com/static/app.js → <dir>/static/app.js.map, or a
	// local copy <dir>/static/app.js whose sourceMappingURL comment names
	// its map), and are scanned for the debug ids Sentry's bundler plugins
	// inject.
	Directories []string `mapstructure:"directories"`
	// RescanInterval is the least time between two scans of the
	// directories for debug ids, made when a frame names one not seen yet.
	RescanInterval time.Duration `mapstructure:"rescan_interval"`
}

const (
	defaultArtifactCacheBytes = 512 << 20
	defaultFrameCacheBytes    = 64 << 20
	defaultMaxArtifactBytes   = 256 << 20
	defaultRescanInterval     = time.Minute
)

func (c *SourceMapsConfig) enabled() bool { return len(c.Directories) > 0 }

// Validate checks that some kind is configured and that every bound is
// positive.
func (c *Config) Validate() error {
	var errs []error
	if !c.SourceMaps.enabled() {
		errs = append(errs, errors.New("nothing to resolve with: configure source_maps.directories"))
	}
	errs = append(errs, validateDirectories("source_maps.directories", c.SourceMaps.Directories))
	if c.SourceMaps.RescanInterval < 0 {
		errs = append(errs, fmt.Errorf("source_maps.rescan_interval must not be negative, got %s", c.SourceMaps.RescanInterval))
	}
	for name, v := range map[string]int64{
		"artifact_cache_bytes": c.ArtifactCacheBytes,
		"frame_cache_bytes":    c.FrameCacheBytes,
		"max_artifact_bytes":   c.MaxArtifactBytes,
	} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	return errors.Join(errs...)
}

func validateDirectories(field string, dirs []string) error {
	for i, d := range dirs {
		if d == "" {
			return fmt.Errorf("%s[%d] is empty", field, i)
		}
	}
	return nil
}

package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Config configures the symbolication processor: where each kind of
// artifact is found, and how much memory the caches may hold. A kind
// without directories is off; its frames pass untouched.
type Config struct {
	// SourceMaps resolves minified JavaScript.
	SourceMaps SourceMapsConfig `mapstructure:"source_maps"`
	// ProGuard resolves JVM frames obfuscated by ProGuard or R8.
	ProGuard ProGuardConfig `mapstructure:"proguard"`
	// Native resolves addresses in native binaries.
	Native NativeConfig `mapstructure:"native"`
	// ArtifactCacheBytes bounds the parsed artifacts each kind keeps in
	// memory (least recently used go first).
	ArtifactCacheBytes int64 `mapstructure:"artifact_cache_bytes"`
	// FrameCacheBytes bounds the cache of resolved frames, which answers a
	// frame seen before without looking at its artifact.
	FrameCacheBytes int64 `mapstructure:"frame_cache_bytes"`
	// MaxArtifactBytes bounds one artifact file read from disk (a source
	// map, a bundle, a mapping, a debug file) or fetched from debuginfod:
	// a larger one is refused by its size before it is read.
	MaxArtifactBytes int64 `mapstructure:"max_artifact_bytes"`
	// MaxBatchWait bounds how long a batch waits for artifacts that are
	// being scanned for, loaded or fetched in the background. Frames whose
	// artifact is not ready by then pass as they came (counted with reason
	// `pending`) and are resolved in a later batch.
	MaxBatchWait time.Duration `mapstructure:"max_batch_wait"`

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

// ProGuardConfig says where the ProGuard/R8 mappings are.
type ProGuardConfig struct {
	// Directories hold mapping files named by the UUID the app reports
	// (<uuid>.txt or <uuid>/mapping.txt, as Sentry's Android Gradle plugin
	// names its uploads), or any .txt mapping, found by its content UUID.
	Directories []string `mapstructure:"directories"`
	// RescanInterval is the least time between two scans of the
	// directories, made when a profile names a UUID not seen yet.
	RescanInterval time.Duration `mapstructure:"rescan_interval"`
}

// NativeConfig says where the debug files of native binaries are.
type NativeConfig struct {
	// Directories hold ELF debug files (or unstripped binaries) in the
	// .build-id/xx/rest.debug layout or anywhere below, indexed by build
	// id in the background.
	Directories []string `mapstructure:"directories"`
	// RescanInterval is the least time between two scans of the
	// directories, made when a profile names a build id no file has.
	RescanInterval time.Duration `mapstructure:"rescan_interval"`
	// DebuginfodURLs are debuginfod servers asked, in order, for a build
	// id no local file has. The processor makes no network request
	// without them.
	DebuginfodURLs []string `mapstructure:"debuginfod_urls"`
	// CacheDirectory keeps the files fetched from DebuginfodURLs
	// (required with them).
	CacheDirectory string `mapstructure:"cache_directory"`
	// CacheDirectoryBytes bounds CacheDirectory.
	CacheDirectoryBytes int64 `mapstructure:"cache_directory_bytes"`
	// Timeout bounds one debuginfod request.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxConcurrentFetches bounds the debuginfod requests in flight.
	MaxConcurrentFetches int `mapstructure:"max_concurrent_fetches"`
	// MaxFetchesPerBatch bounds the build ids one batch may start
	// fetching from debuginfod; the others are fetched for later batches.
	MaxFetchesPerBatch int `mapstructure:"max_fetches_per_batch"`
}

func (c *ProGuardConfig) enabled() bool { return len(c.Directories) > 0 }

func (c *NativeConfig) enabled() bool { return len(c.Directories) > 0 || len(c.DebuginfodURLs) > 0 }

const (
	defaultArtifactCacheBytes = 512 << 20
	defaultFrameCacheBytes    = 64 << 20
	defaultMaxArtifactBytes   = 256 << 20
	defaultRescanInterval     = time.Minute
	defaultDebuginfodTimeout  = 2 * time.Minute
	defaultCacheDirBytes      = 1 << 30
	defaultMaxBatchWait       = time.Second
	defaultConcurrentFetches  = 4
	defaultFetchesPerBatch    = 16
)

func (c *SourceMapsConfig) enabled() bool { return len(c.Directories) > 0 }

// Validate checks that some kind is configured and that every bound is
// positive.
func (c *Config) Validate() error {
	var errs []error
	if !c.SourceMaps.enabled() && !c.ProGuard.enabled() && !c.Native.enabled() {
		errs = append(errs, errors.New("nothing to resolve with: configure source_maps, proguard or native directories (or native debuginfod_urls)"))
	}
	errs = append(errs,
		validateDirectories("source_maps.directories", c.SourceMaps.Directories),
		validateDirectories("proguard.directories", c.ProGuard.Directories),
		validateDirectories("native.directories", c.Native.Directories),
		c.Native.validateDebuginfod())
	errs = appendNegative(errs, map[string]time.Duration{
		"source_maps.rescan_interval": c.SourceMaps.RescanInterval,
		"proguard.rescan_interval":    c.ProGuard.RescanInterval,
		"native.rescan_interval":      c.Native.RescanInterval,
		"native.timeout":              c.Native.Timeout,
	})
	errs = appendNotPositive(errs, map[string]time.Duration{"max_batch_wait": c.MaxBatchWait})
	errs = appendNotPositive(errs, map[string]int{
		"native.max_concurrent_fetches": c.Native.MaxConcurrentFetches,
		"native.max_fetches_per_batch":  c.Native.MaxFetchesPerBatch,
	})
	errs = appendNotPositive(errs, map[string]int64{
		"artifact_cache_bytes":         c.ArtifactCacheBytes,
		"frame_cache_bytes":            c.FrameCacheBytes,
		"max_artifact_bytes":           c.MaxArtifactBytes,
		"native.cache_directory_bytes": c.Native.CacheDirectoryBytes,
	})
	return errors.Join(errs...)
}

// appendNegative appends an error for each setting below zero.
func appendNegative[T int | int64 | time.Duration](errs []error, settings map[string]T) []error {
	for name, v := range settings {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %v", name, v))
		}
	}
	return errs
}

// appendNotPositive appends an error for each setting not above zero.
func appendNotPositive[T int | int64 | time.Duration](errs []error, settings map[string]T) []error {
	for name, v := range settings {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %v", name, v))
		}
	}
	return errs
}

func validateDirectories(field string, dirs []string) error {
	for i, d := range dirs {
		if d == "" {
			return fmt.Errorf("%s[%d] is empty", field, i)
		}
	}
	return nil
}

func (c *NativeConfig) validateDebuginfod() error {
	if len(c.DebuginfodURLs) == 0 {
		return nil
	}
	if c.CacheDirectory == "" {
		return errors.New("native.debuginfod_urls needs native.cache_directory for the files it fetches")
	}
	for i, raw := range c.DebuginfodURLs {
		if !isHTTPURL(raw) {
			return fmt.Errorf("native.debuginfod_urls[%d] %q is not an http(s) URL", i, raw)
		}
	}
	return nil
}

// isHTTPURL accepts http(s)://host[/path].
func isHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

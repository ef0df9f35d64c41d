package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"fmt"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/native"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/proguard"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap"
)

// newResolver makes the resolver of a kind from its configuration, and
// the function that stops it; nil when the kind is not configured.
func (c *Config) newResolver(kind symbolication.Kind) (symbolication.Resolver, func(), error) {
	switch kind {
	case symbolication.KindSourceMap:
		if c.SourceMaps.enabled() {
			return c.sourceMapResolver()
		}
	case symbolication.KindProGuard:
		if c.ProGuard.enabled() {
			return c.proguardResolver()
		}
	case symbolication.KindNative:
		if c.Native.enabled() {
			return c.nativeResolver()
		}
	}
	return nil, nil, nil
}

func (c *Config) sourceMapResolver() (symbolication.Resolver, func(), error) {
	r, err := sourcemap.NewResolver(sourcemap.Options{
		Dirs:             c.SourceMaps.Directories,
		MaxCacheBytes:    c.ArtifactCacheBytes,
		MaxArtifactBytes: c.MaxArtifactBytes,
		RescanInterval:   c.SourceMaps.RescanInterval,
	})
	if err != nil {
		return nil, nil, err
	}
	return r, r.Close, nil
}

func (c *Config) proguardResolver() (symbolication.Resolver, func(), error) {
	r, err := proguard.NewResolver(proguard.Options{
		Dirs:             c.ProGuard.Directories,
		MaxCacheBytes:    c.ArtifactCacheBytes,
		MaxArtifactBytes: c.MaxArtifactBytes,
		RescanInterval:   c.ProGuard.RescanInterval,
	})
	if err != nil {
		return nil, nil, err
	}
	return r, r.Close, nil
}

func (c *Config) nativeResolver() (symbolication.Resolver, func(), error) {
	r, err := native.NewResolver(native.Options{
		DebugDirs:            c.Native.Directories,
		RescanInterval:       c.Native.RescanInterval,
		DebuginfodURLs:       c.Native.DebuginfodURLs,
		CacheDir:             c.Native.CacheDirectory,
		MaxCacheBytes:        c.Native.CacheDirectoryBytes,
		MaxMemoryBytes:       c.ArtifactCacheBytes,
		MaxFileBytes:         c.MaxArtifactBytes,
		MaxConcurrentFetches: c.Native.MaxConcurrentFetches,
		HTTPClient:           &http.Client{Timeout: c.Native.Timeout},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("native symbolication: %w", err)
	}
	return r, func() { _ = r.Close() }, nil
}

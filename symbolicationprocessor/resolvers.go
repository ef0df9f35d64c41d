package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"fmt"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/native"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/proguard"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap"
)

// resolverMaker makes the resolver of a kind from its configuration, and
// the function that stops it.
type resolverMaker struct {
	kind    symbolication.Kind
	enabled bool
	make    func() (symbolication.Resolver, func(), error)
}

// resolverMakers are the kinds' makers, in the order they start.
func (c *Config) resolverMakers() []resolverMaker {
	return []resolverMaker{
		{symbolication.KindSourceMap, c.SourceMaps.enabled(), c.sourceMapResolver},
		{symbolication.KindProGuard, c.ProGuard.enabled(), c.proguardResolver},
		{symbolication.KindNative, c.Native.enabled(), c.nativeResolver},
	}
}

func (c *Config) sourceMapResolver() (symbolication.Resolver, func(), error) {
	r, err := sourcemap.NewResolver(sourcemap.Options{
		Dirs:             c.SourceMaps.Directories,
		MaxCacheBytes:    c.ArtifactCacheBytes,
		MaxArtifactBytes: c.MaxArtifactBytes,
		RescanInterval:   c.SourceMaps.RescanInterval,
		ParseScopes:      parseJSScopes,
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

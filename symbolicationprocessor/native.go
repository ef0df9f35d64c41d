package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/native"
)

// nativeResolver adapts native.Resolver to the processor's resolvers.
type nativeResolver struct {
	r *native.Resolver
}

func newNativeResolver(cfg *NativeConfig, memoryBytes, maxFileBytes int64) (*nativeResolver, error) {
	r, err := native.NewResolver(native.Options{
		DebugDirs:            cfg.Directories,
		DebuginfodURLs:       cfg.DebuginfodURLs,
		CacheDir:             cfg.CacheDirectory,
		MaxCacheBytes:        cfg.CacheDirectoryBytes,
		MaxMemoryBytes:       memoryBytes,
		MaxFileBytes:         maxFileBytes,
		MaxConcurrentFetches: cfg.MaxConcurrentFetches,
		HTTPClient:           &http.Client{Timeout: cfg.Timeout},
	})
	if err != nil {
		return nil, fmt.Errorf("native symbolication: %w", err)
	}
	return &nativeResolver{r: r}, nil
}

// Resolve maps Frame.Address in the binary in.BuildID loaded at
// in.ImageAddr to its functions, innermost (inlined) first.
func (n *nativeResolver) Resolve(ctx context.Context, in symbolication.Lookup) ([]symbolication.Frame, error) {
	frames, err := n.r.ResolveAbsolute(ctx, in.BuildID, in.Frame.Address, in.ImageAddr)
	switch {
	case errors.Is(err, native.ErrPending):
		return nil, fmt.Errorf("%w: %w", symbolication.ErrPending, err)
	case errors.Is(err, native.ErrNotFound):
		return nil, fmt.Errorf("%w: %w", symbolication.ErrNoArtifact, err)
	case err != nil:
		return nil, err
	case len(frames) == 0 || frames[0].Function == "":
		return nil, fmt.Errorf("address %#x in build id %s: %w", in.Frame.Address, in.BuildID, symbolication.ErrNoMatch)
	}
	out := make([]symbolication.Frame, len(frames))
	for i, f := range frames {
		out[i] = symbolication.Frame{Function: f.Function, File: f.File, Line: f.Line, Inlined: f.Inlined}
	}
	return out, nil
}

// Prefetch starts loading the debug file of the frame's binary, so that
// the binaries of a batch load concurrently.
func (n *nativeResolver) Prefetch(ctx context.Context, in symbolication.Lookup) {
	n.r.Prefetch(ctx, in.BuildID)
}

func (n *nativeResolver) close() { _ = n.r.Close() }

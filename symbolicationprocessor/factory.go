package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper/xprocessorhelper"
	"go.opentelemetry.io/collector/processor/xprocessor"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
)

// NewFactory returns the factory of the symbolication processor.
func NewFactory() xprocessor.Factory {
	return xprocessor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xprocessor.WithProfiles(createProfiles, metadata.ProfilesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		SourceMaps: SourceMapsConfig{RescanInterval: defaultRescanInterval},
		ProGuard:   ProGuardConfig{RescanInterval: defaultRescanInterval},
		Native: NativeConfig{RescanInterval: defaultRescanInterval, Timeout: defaultDebuginfodTimeout, CacheDirectoryBytes: defaultCacheDirBytes,
			MaxConcurrentFetches: defaultConcurrentFetches, MaxFetchesPerBatch: defaultFetchesPerBatch},
		ArtifactCacheBytes: defaultArtifactCacheBytes,
		FrameCacheBytes:    defaultFrameCacheBytes,
		MaxArtifactBytes:   defaultMaxArtifactBytes,
		MaxBatchWait:       defaultMaxBatchWait,
	}
}

func createProfiles(ctx context.Context, set processor.Settings, cfg component.Config, next xconsumer.Profiles) (xprocessor.Profiles, error) {
	p, err := newFrameProcessor(cfg.(*Config), set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return xprocessorhelper.NewProfiles(ctx, set, cfg, next, p.processProfiles,
		xprocessorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		xprocessorhelper.WithStart(p.start),
		xprocessorhelper.WithShutdown(p.shutdown))
}

package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processorhelper/xprocessorhelper"
	"go.opentelemetry.io/collector/processor/xprocessor"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
)

// NewFactory returns the factory of the symbolication processor. Its
// profiles and logs pipelines of one configuration share one processor
// (sharedCores).
func NewFactory() xprocessor.Factory {
	shared := newSharedCores()
	return xprocessor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xprocessor.WithProfiles(shared.createProfiles, metadata.ProfilesStability),
		xprocessor.WithLogs(shared.createLogs, metadata.LogsStability),
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

func (s *sharedCores) createProfiles(ctx context.Context, set processor.Settings, cfg component.Config, next xconsumer.Profiles) (xprocessor.Profiles, error) {
	h, err := s.handle(cfg.(*Config), set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return xprocessorhelper.NewProfiles(ctx, set, cfg, next, h.core.p.processProfiles,
		xprocessorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		xprocessorhelper.WithStart(h.start),
		xprocessorhelper.WithShutdown(h.shutdown))
}

func (s *sharedCores) createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	h, err := s.handle(cfg.(*Config), set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, h.core.p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(h.start),
		processorhelper.WithShutdown(h.shutdown))
}

package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/exporter/xexporter"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
)

const (
	// defaultPlatform is Sentry's platform for natively compiled code, the
	// usual source of profiles that carry no language (eBPF, pprof).
	defaultPlatform = "native"
	// defaultSampleRateHz is the rate Sentry SDKs sample at (profiles spec).
	defaultSampleRateHz = 101
	// defaultChunkWindow is the chunk length of Sentry SDKs.
	defaultChunkWindow = 60 * time.Second
	// defaultFlushInterval leaves room in a 60 s window for the profile
	// that was already under way when the first one arrived: the eBPF
	// profiler reports every 5 s, so 50 s of arrivals span about 55 s.
	defaultFlushInterval = 50 * time.Second
	// defaultMaxSamples bounds what waits for a flush: about 40 MiB of
	// sample records, far above a minute of a busy host at 20 Hz.
	defaultMaxSamples = 1 << 18
)

// NewFactory returns the factory of the sentryprofile exporter.
func NewFactory() xexporter.Factory {
	return xexporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xexporter.WithProfiles(createProfiles, metadata.ProfilesStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second
	client.Compression = configcompression.TypeGzip
	return &Config{
		ClientConfig: client,
		QueueConfig:  configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		RetryConfig:  configretry.NewDefaultBackOffConfig(),
		Routing: RoutingConfig{
			Attribute: string(semconv.ServiceNameKey),
		},
		Platform:     defaultPlatform,
		SampleRateHz: defaultSampleRateHz,
		Chunking: ChunkingConfig{
			Window:        defaultChunkWindow,
			FlushInterval: defaultFlushInterval,
			MaxSamples:    defaultMaxSamples,
		},
	}
}

func createProfiles(ctx context.Context, set exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
	c := cfg.(*Config)
	exp, err := newExporter(c, set)
	if err != nil {
		return nil, err
	}
	queued, err := xexporterhelper.NewProfiles(ctx, set, cfg, exp.pushProfiles,
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The HTTP client's timeout bounds every request (see Config).
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig),
	)
	if err != nil || c.Chunking.FlushInterval == 0 {
		return queued, err
	}
	return newMerger(queued, c.Chunking, set.Logger, exp.telemetry), nil
}

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
	// defaultBatchFlushTimeout is how long sending_queue::batch gathers
	// requests before they are converted: the eBPF profiler reports every
	// 5 s, so 50 s of reports span about 55 s and make one chunk of a 60 s
	// window per process instead of one per report.
	defaultBatchFlushTimeout = 50 * time.Second
	// defaultBatchMinSize (sample records) flushes a batch early, which
	// bounds memory: about 40 MiB of records, far above a minute of a busy
	// host profiled at 20 Hz.
	defaultBatchMinSize = 1 << 18
	// defaultMaxCumulativeSeries: a few hundred bytes each, some tens of
	// MiB at most.
	defaultMaxCumulativeSeries = 100_000
)

// NewFactory returns the factory of the sentryprofile exporter.
func NewFactory() xexporter.Factory {
	shared := &sharedExporters{byConfig: map[*Config]*sharedExporter{}}
	return xexporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xexporter.WithProfiles(shared.createProfiles, metadata.ProfilesStability),
		xexporter.WithLogs(shared.createLogs, metadata.LogsStability),
		xexporter.WithTraces(shared.createTraces, metadata.TracesStability),
		xexporter.WithMetrics(shared.createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second
	client.Compression = configcompression.TypeGzip
	return &Config{
		ClientConfig: client,
		QueueConfig:  configoptional.Some(defaultQueueConfig()),
		RetryConfig:  configretry.NewDefaultBackOffConfig(),
		Routing: RoutingConfig{
			Attribute: string(semconv.ServiceNameKey),
		},
		Platform:     defaultPlatform,
		SampleRateHz: defaultSampleRateHz,
		ChunkWindow:  defaultChunkWindow,
		Metrics:      MetricsConfig{MaxCumulativeSeries: defaultMaxCumulativeSeries},
	}
}

// defaultQueueConfig is exporterhelper's queue with batching on: requests
// are merged in the queue, so that the translator sees many consecutive
// profiles of each profiler at once and cuts chunks of up to chunk_window
// instead of one per report. Batching sits behind the queue, so a
// persistent queue keeps a request until the batch holding it is sent, and
// Shutdown flushes the open batch.
func defaultQueueConfig() exporterhelper.QueueBatchConfig {
	q := exporterhelper.NewDefaultQueueConfig()
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.FlushTimeout = defaultBatchFlushTimeout
	batch.Sizer = exporterhelper.RequestSizerTypeItems
	batch.MinSize = defaultBatchMinSize
	q.Batch = configoptional.Some(batch)
	return q
}

func (s *sharedExporters) createProfiles(ctx context.Context, set exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
	c := cfg.(*Config)
	exp, err := s.get(c, set)
	if err != nil {
		return nil, err
	}
	return xexporterhelper.NewProfiles(ctx, set, cfg, exp.pushProfiles,
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The HTTP client's timeout bounds every request (see Config).
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		// max_elapsed_time is applied by the exporter (retryBudget), to
		// the time spent failing only: exporterhelper would count the wait
		// for a rate limit too, and drop the request uncounted.
		exporterhelper.WithRetry(unlimitedElapsed(c.RetryConfig)),
		exporterhelper.WithQueue(c.QueueConfig),
	)
}

// createLogs, createTraces and createMetrics build the exporter of the
// signals beside profiles with the same delivery rules (signals.go), on the
// same sentryExporter as every other pipeline of the configuration.
func (s *sharedExporters) createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	exp, err := s.get(c, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, exp.pushLogs, signalOptions(c, exp)...)
}

func (s *sharedExporters) createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c := cfg.(*Config)
	exp, err := s.get(c, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, exp.pushTraces, signalOptions(c, exp)...)
}

func (s *sharedExporters) createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	c := cfg.(*Config)
	exp, err := s.get(c, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewMetrics(ctx, set, cfg, exp.pushMetrics, signalOptions(c, exp)...)
}

// signalOptions are the profiles' exporterhelper options with the queue's
// batching off: sending_queue::batch gathers profiles into chunk-long
// windows (50 s by default), which would hold an exception back as long;
// events and trace_metric containers are batched by the translator.
func signalOptions(c *Config, exp *sharedExporter) []exporterhelper.Option {
	queue := c.QueueConfig
	if queue.HasValue() {
		q := *queue.Get()
		q.Batch = configoptional.None[exporterhelper.BatchConfig]()
		queue = configoptional.Some(q)
	}
	return []exporterhelper.Option{
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(unlimitedElapsed(c.RetryConfig)),
		exporterhelper.WithQueue(queue),
	}
}

// unlimitedElapsed is cfg without a max_elapsed_time, for exporterhelper.
func unlimitedElapsed(cfg configretry.BackOffConfig) configretry.BackOffConfig {
	cfg.MaxElapsedTime = 0
	return cfg
}

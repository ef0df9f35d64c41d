package sentryprofileexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadatatest"
)

// testTimeout bounds every wait of these tests.
const testTimeout = 20 * time.Second

// newTestConfig is the default configuration pointed at dsn, with retries
// fast enough for tests, and every request sent as it arrives: no batching
// in the queue (the tests of merging requests turn it on themselves).
func newTestConfig(dsn string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(dsn)
	q := cfg.QueueConfig.Get()
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	cfg.ClientConfig.Timeout = 5 * time.Second
	cfg.RetryConfig.InitialInterval = 20 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 200 * time.Millisecond
	cfg.RetryConfig.RandomizationFactor = 0
	cfg.RetryConfig.MaxElapsedTime = time.Minute
	return cfg
}

// runningExporter is a started exporter with its observed logs and metrics.
type runningExporter struct {
	xexporter.Profiles
	telemetry *componenttest.Telemetry
	logs      *observer.ObservedLogs
}

func startExporter(t *testing.T, cfg *Config, host component.Host) runningExporter {
	t.Helper()
	tel := componenttest.NewTelemetry()
	set := metadatatest.NewSettings(tel)
	core, logs := observer.New(zapcore.DebugLevel)
	set.Logger = zap.New(core)
	exp, err := NewFactory().CreateProfiles(context.Background(), set, cfg)
	require.NoError(t, err)
	if host == nil {
		host = componenttest.NewNopHost()
	}
	require.NoError(t, exp.Start(context.Background(), host))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			require.NoError(t, exp.Shutdown(context.Background()))
		}
		require.NoError(t, tel.Shutdown(context.Background()))
	})
	return runningExporter{Profiles: &stoppable{Profiles: exp, stopped: &stopped}, telemetry: tel, logs: logs}
}

// stoppable remembers that a test shut the exporter down itself.
type stoppable struct {
	xexporter.Profiles
	stopped *bool
}

func (s *stoppable) Shutdown(ctx context.Context) error {
	*s.stopped = true
	return s.Profiles.Shutdown(ctx)
}

package sentryprofileexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
)

// lifecycleProfiles is one resource with a few timed samples on two stacks.
func lifecycleProfiles() pprofile.Profiles {
	s := newSynth()
	sp := s.resource("lifecycle")
	start := time.Now().Add(-time.Second).Truncate(time.Millisecond)
	p := s.profile(sp, "samples", "count", start, time.Second, 1)
	main := s.symbolized("main", "main.go", 10)
	work := s.symbolized("work", "work.go", 20)
	timedSample(p, s.stack(work, main), start, start.Add(10*time.Millisecond))
	timedSample(p, s.stack(main), start.Add(20*time.Millisecond))
	return s.pd
}

// TestProfilesLifecycle is the profiles case mdatagen does not generate for
// exporters: create, start, consume, shut down, for each way of building the
// exporter.
func TestProfilesLifecycle(t *testing.T) {
	relay := newFakeRelay(t, nil)
	factory := NewFactory()
	require.Equal(t, metadata.Type, factory.Type())
	require.Equal(t, metadata.ProfilesStability, factory.ProfilesStability())

	tests := []struct {
		name   string
		config func() *Config
	}{
		{name: "default queue", config: func() *Config { return newTestConfig(relay.dsn()) }},
		{name: "no queue", config: func() *Config {
			cfg := newTestConfig(relay.dsn())
			cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
			return cfg
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"-shutdown", func(t *testing.T) {
			exp, err := factory.CreateProfiles(context.Background(), exportertest.NewNopSettings(metadata.Type), tt.config())
			require.NoError(t, err)
			require.NoError(t, exp.Shutdown(context.Background()), "shutdown before start")
		})
		t.Run(tt.name+"-lifecycle", func(t *testing.T) {
			before := len(relay.envelopes())
			exp, err := factory.CreateProfiles(context.Background(), exportertest.NewNopSettings(metadata.Type), tt.config())
			require.NoError(t, err)
			assert.False(t, exp.Capabilities().MutatesData)
			require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, exp.ConsumeProfiles(context.Background(), lifecycleProfiles()))
			relay.waitDelivered(t, 1)
			require.NoError(t, exp.Shutdown(context.Background()))
			assert.Len(t, relay.envelopes(), before+1)
		})
	}
}

func TestCreateProfilesRejectsBadDSN(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.DSN = "https://host-without-key/1"
	_, err := NewFactory().CreateProfiles(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.Error(t, err)
}

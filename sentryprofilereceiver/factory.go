package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
)

// NewFactory returns the factory of the sentryprofile receiver.
func NewFactory() xreceiver.Factory {
	return xreceiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xreceiver.WithProfiles(createProfiles, metadata.ProfilesStability),
	)
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	server.MaxRequestBodySize = defaultMaxRequestBodySize
	server.ReadTimeout = defaultReadTimeout
	return &Config{
		ServerConfig:           server,
		MaxItemsPerEnvelope:    defaultMaxItemsPerEnvelope,
		MaxProfileItemSize:     defaultMaxProfileItemSize,
		RetryAfter:             defaultRetryAfter,
		MaxConcurrentEnvelopes: defaultMaxConcurrentEnvelopes,
		Validation:             ValidationLenient,
	}
}

func createProfiles(_ context.Context, set receiver.Settings, cfg component.Config, next xconsumer.Profiles) (xreceiver.Profiles, error) {
	return newReceiver(cfg.(*Config), set, next)
}

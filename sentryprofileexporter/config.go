package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

// Config is the configuration of the sentryprofile exporter.
//
// The HTTP client settings are squashed into the top level like in every
// collector HTTP exporter, with one difference: `endpoint` is not used,
// because the Sentry envelope URL is derived from the DSN of each resource.
// `timeout` is the HTTP client's per-request timeout (as in otlphttp); the
// exporterhelper timeout is not configured separately because both would
// claim the same key.
type Config struct {
	// ClientConfig is a named field, not an embedded one: embedding would
	// promote its Unmarshal method to Config and hide every other key.
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`

	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	// DSN is the Sentry project DSN that receives every resource that routing
	// does not send elsewhere. It carries the project's key, so it is opaque.
	DSN configopaque.String `mapstructure:"dsn"`

	// Routing sends resources to other projects by one resource attribute.
	Routing RoutingConfig `mapstructure:"routing"`

	// Platform is the Sentry platform written into a chunk when none can be
	// derived from the profile's resource.
	Platform string `mapstructure:"platform"`

	// SampleRateHz is the rate used to spread aggregated samples (one value
	// standing for many observations) over the profile's time range.
	SampleRateHz float64 `mapstructure:"sample_rate_hz"`

	// DefaultRelease is the chunks' release when the resource has no
	// service.version; DefaultEnvironment their environment when it has no
	// deployment.environment.name (nor deployment.environment). Sentry
	// groups profiles by both.
	DefaultRelease     string `mapstructure:"default_release"`
	DefaultEnvironment string `mapstructure:"default_environment"`

	// ChunkWindow is the longest span of one chunk: the profiles of one
	// profiler that a request holds (sending_queue::batch merges the
	// requests that arrive within its flush_timeout into one) are merged
	// and cut into chunks of at most this length. At most 66 s, Relay's
	// limit.
	ChunkWindow time.Duration `mapstructure:"chunk_window"`

	// Events configures the logs and traces signals: exceptions become
	// Sentry error events.
	Events EventsConfig `mapstructure:"events"`
	// Metrics configures the metrics signal: points become trace_metric
	// items.
	Metrics MetricsConfig `mapstructure:"metrics"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// EventsConfig configures how exceptions in logs and spans become Sentry
// error events.
type EventsConfig struct {
	// InAppPrefixes mark a frame in_app when its module, package, function
	// or file starts with one of them (and every other frame not in_app).
	InAppPrefixes []string `mapstructure:"in_app_prefixes"`
	// TagAttributes are the attribute keys copied into the event's tags
	// (searchable in Sentry), looked up on the record or span event, the
	// span, then the resource.
	TagAttributes []string `mapstructure:"tag_attributes"`
	// LogMessageMinSeverity sends log records without an exception as
	// message events when their severity is at least this (trace, debug,
	// info, warn, error, fatal); empty sends none.
	LogMessageMinSeverity string `mapstructure:"log_message_min_severity"`
	// ErrorSpans sends spans whose status is Error and that recorded no
	// exception as error events.
	ErrorSpans bool `mapstructure:"error_spans"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// MetricsConfig configures how metric points become trace_metric items.
type MetricsConfig struct {
	// MaxCumulativeSeries bounds the cumulative series whose last point is
	// remembered to send the next one as a delta.
	MaxCumulativeSeries int `mapstructure:"max_cumulative_series"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// severityNumbers are the names log_message_min_severity takes.
var severityNumbers = map[string]plog.SeverityNumber{
	"trace": plog.SeverityNumberTrace, "debug": plog.SeverityNumberDebug, "info": plog.SeverityNumberInfo,
	"warn": plog.SeverityNumberWarn, "error": plog.SeverityNumberError, "fatal": plog.SeverityNumberFatal,
}

// RoutingConfig picks a DSN per resource from the value of a resource
// attribute; resources whose value is not listed go to Config.DSN.
type RoutingConfig struct {
	// Attribute is the resource attribute whose string value selects the DSN.
	Attribute string `mapstructure:"attribute"`
	// DSNs maps an attribute value to the DSN of the project receiving it.
	DSNs map[string]configopaque.String `mapstructure:"dsns"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// maxChunkWindow is Relay's limit on the span of one chunk.
const maxChunkWindow = 66 * time.Second

var _ component.Config = (*Config)(nil)

// Validate reports every configuration problem. Errors about a DSN never
// contain the DSN itself (sentryhttp.ParseDSN does not quote it): it carries
// the project key.
func (cfg *Config) Validate() error {
	var errs []error
	errs = append(errs, cfg.validateDestinations()...)
	errs = append(errs, cfg.validateChunks()...)
	errs = append(errs, cfg.validateSignals()...)
	return errors.Join(errs...)
}

// validateDestinations checks where envelopes go: a DSN, or one per
// routing value, each a DSN that parses, and no endpoint.
func (cfg *Config) validateDestinations() []error {
	var errs []error
	if cfg.ClientConfig.Endpoint != "" {
		errs = append(errs, errors.New("endpoint: not used by this exporter, the Sentry envelope URL is derived from the DSN; set dsn instead"))
	}
	if cfg.DSN == "" && len(cfg.Routing.DSNs) == 0 {
		errs = append(errs, errors.New("dsn: required (or routing::dsns for every resource)"))
	}
	if cfg.DSN != "" {
		if _, err := sentryhttp.ParseDSN(string(cfg.DSN)); err != nil {
			errs = append(errs, fmt.Errorf("dsn: %w", err))
		}
	}
	if len(cfg.Routing.DSNs) > 0 && cfg.Routing.Attribute == "" {
		errs = append(errs, errors.New("routing::attribute: required when routing::dsns is set"))
	}
	return append(errs, cfg.Routing.validateDSNs()...)
}

// validateDSNs parses every routed DSN, in the order of their values so
// that the same configuration always reports the same error.
func (r RoutingConfig) validateDSNs() []error {
	var errs []error
	for _, value := range slices.Sorted(maps.Keys(r.DSNs)) {
		if _, err := sentryhttp.ParseDSN(string(r.DSNs[value])); err != nil {
			errs = append(errs, fmt.Errorf("routing::dsns::%s: %w", value, err))
		}
	}
	return errs
}

// validateChunks checks what shapes a profile chunk: its platform, rate
// and window.
func (cfg *Config) validateChunks() []error {
	var errs []error
	if cfg.Platform == "" {
		errs = append(errs, errors.New("platform: must not be empty"))
	}
	if !(cfg.SampleRateHz > 0) || math.IsInf(cfg.SampleRateHz, 0) {
		errs = append(errs, fmt.Errorf("sample_rate_hz: must be a positive number, got %v", cfg.SampleRateHz))
	}
	if w := cfg.ChunkWindow; w < time.Second || w > maxChunkWindow {
		errs = append(errs, fmt.Errorf("chunk_window: must be between 1s and %s (Relay's limit), got %s", maxChunkWindow, w))
	}
	return errs
}

// validateSignals checks the settings of the events and metrics made from
// the other signals.
func (cfg *Config) validateSignals() []error {
	var errs []error
	if v := cfg.Events.LogMessageMinSeverity; v != "" {
		if _, ok := severityNumbers[v]; !ok {
			errs = append(errs, fmt.Errorf("events::log_message_min_severity: one of trace, debug, info, warn, error, fatal, got %q", v))
		}
	}
	if cfg.Metrics.MaxCumulativeSeries < 1 {
		errs = append(errs, fmt.Errorf("metrics::max_cumulative_series: must be positive, got %d", cfg.Metrics.MaxCumulativeSeries))
	}
	return errs
}

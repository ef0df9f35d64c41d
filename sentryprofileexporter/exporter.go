package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumererror/xconsumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/otelevent"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// sdkName is how this exporter introduces itself to Sentry: in the envelope
// `sdk` header, in each chunk's `client_sdk`, in `sentry_client` and in the
// User-Agent.
const sdkName = "sentryprofileexporter"

// Drop reasons of this exporter, beside the Relay reasons the translator
// reports.
const (
	reasonNoDSN    = "no_dsn"   // routing found no project for the resource
	reasonRejected = "rejected" // Sentry answered with a permanent error
	// reasonRedirected: Sentry answered 301 or 308; redirects are never
	// followed (see refuseRedirects).
	reasonRedirected = "redirected"
	// reasonRetriesExhausted: Sentry failed (5xx, no answer, a temporary
	// redirect) for longer than retry_on_failure::max_elapsed_time.
	reasonRetriesExhausted = "retries_exhausted"
)

type sentryExporter struct {
	cfg        *Config
	settings   component.TelemetrySettings
	logger     *zap.Logger
	telemetry  *metadata.TelemetryBuilder
	router     *router
	exportOpts profilesout.ExportOptions
	sdk        envelopeSDK
	userAgent  string
	client     *http.Client // built in start, where extensions (auth, middlewares) are known
	retries    *retryBudget

	// The logs, traces and metrics signals (signals.go).
	eventOpts       otelevent.EventOptions
	metricOpts      otelevent.MetricOptions
	events, metrics *signal
}

func newExporter(cfg *Config, set exporter.Settings) (*sentryExporter, error) {
	// Sentry requires a client_sdk version; a host without build info still
	// gets one.
	version := cmp.Or(set.BuildInfo.Version, "unknown")
	r, err := newRouter(cfg, sdkName+"/"+version)
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sentryprofile telemetry: %w", err)
	}
	e := &sentryExporter{
		cfg:       cfg,
		settings:  set.TelemetrySettings,
		logger:    set.Logger,
		telemetry: tb,
		router:    r,
		exportOpts: profilesout.ExportOptions{
			DefaultPlatform:     cfg.Platform,
			SDKName:             sdkName,
			SDKVersion:          version,
			DefaultSampleRateHz: cfg.SampleRateHz,
			DefaultRelease:      cfg.DefaultRelease,
			DefaultEnvironment:  cfg.DefaultEnvironment,
			InstanceID:          collectorInstanceID(set),
			ChunkWindow:         cfg.ChunkWindow.Nanoseconds(),
			Platforms:           profilesout.NewPlatformMemory(platformMemorySize),
		},
		sdk:     envelopeSDK{name: sdkName, version: version},
		retries: newRetryBudget(cfg.RetryConfig),
		userAgent: fmt.Sprintf("%s/%s (%s; %s/%s)",
			sdkName, version, set.BuildInfo.Description, runtime.GOOS, runtime.GOARCH),
		eventOpts: otelevent.EventOptions{
			InAppPrefixes:         cfg.Events.InAppPrefixes,
			TagAttributes:         cfg.Events.TagAttributes,
			DefaultRelease:        cfg.DefaultRelease,
			DefaultEnvironment:    cfg.DefaultEnvironment,
			LogMessageMinSeverity: severityNumbers[cfg.Events.LogMessageMinSeverity],
			ErrorSpans:            cfg.Events.ErrorSpans,
		},
		metricOpts: otelevent.MetricOptions{
			DefaultRelease:     cfg.DefaultRelease,
			DefaultEnvironment: cfg.DefaultEnvironment,
			Memory:             otelevent.NewCumulativeMemory(cfg.Metrics.MaxCumulativeSeries, pcommon.NewTimestampFromTime(time.Now())),
		},
	}
	e.events, e.metrics = e.eventsSignal(), e.metricsSignal()
	return e, nil
}

// platformMemorySize is how many profilers keep their platform across
// requests (a few dozen bytes each).
const platformMemorySize = 1 << 16

// collectorInstanceID identifies this collector in the profiler_id of
// sources whose resource names no host, container or instance: the
// collector's service.instance.id, else its host name, else its component
// id. The collector draws a new service.instance.id at each start unless
// the service's telemetry resource sets one, so such profilers start a new
// session when the collector restarts, as they do when the process does.
func collectorInstanceID(set exporter.Settings) string {
	if v, ok := set.Resource.Attributes().Get(string(semconv.ServiceInstanceIDKey)); ok && v.AsString() != "" {
		return v.AsString()
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return host
	}
	return set.ID.String()
}

func (e *sentryExporter) start(ctx context.Context, host component.Host) error {
	client, err := e.cfg.ClientConfig.ToClient(ctx, host.GetExtensions(), e.settings)
	if err != nil {
		return fmt.Errorf("sentryprofile: HTTP client: %w", err)
	}
	refuseRedirects(client)
	e.client = client
	return nil
}

func (e *sentryExporter) shutdown(context.Context) error {
	if e.client != nil {
		e.client.CloseIdleConnections()
	}
	e.telemetry.Shutdown()
	return nil
}

// pushProfiles converts a request to chunks, packs the chunks of each
// project into envelopes and delivers them.
//
// Exactly-once within a request: when some resources were accepted (or
// dropped for good) and others failed with a retryable error, the error
// carries a copy of only the failed resources (xconsumererror.Profiles), so
// the retry resends nothing Sentry already has.
//
// Rate limits are honoured by waiting, never by dropping: a rate-limited
// resource comes back as a throttled retry for as long as the limit lasts,
// and that wait does not count against retry_on_failure::max_elapsed_time
// (see retryBudget), which only other failures spend.
func (e *sentryExporter) pushProfiles(ctx context.Context, pd pprofile.Profiles) error {
	attempt := e.retries.begin(pd, time.Now())
	plans := e.plan(ctx, pd)
	out := e.deliver(ctx, plans)
	if len(out.retried) == 0 {
		e.retries.end(pd)
		if len(out.permErrs) > 0 {
			return consumererror.NewPermanent(errors.Join(out.permErrs...))
		}
		return nil
	}

	err := errors.Join(out.retryErrs...)
	failing := out.failing()
	if failing && attempt.fail(time.Now()) {
		// Sentry failed for longer than max_elapsed_time: what failed is
		// dropped here, and counted; what only waits for a rate limit
		// goes on waiting, under a new record.
		e.retries.end(pd)
		dropped := out.dropFailing(plans)
		e.dropChunks(ctx, reasonRetriesExhausted, dropped.chunks, dropped.samples)
		e.logger.Error("Sentry kept failing for longer than retry_on_failure::max_elapsed_time; dropping profile chunks",
			zap.Int("chunks", dropped.chunks), zap.Duration("max_elapsed_time", e.retries.max), zap.Error(err))
		if len(out.retried) == 0 {
			return consumererror.NewPermanent(err)
		}
		failing = false
	}
	err = out.throttle(err, failing, attempt)
	if retry := out.resources(plans); len(retry) < pd.ResourceProfiles().Len() {
		next := resourcesOf(pd, retry)
		e.retries.move(pd, next)
		return xconsumererror.NewProfiles(err, next)
	}
	return err
}

// dropChunks counts chunks, and the samples in them, that will never reach
// Sentry.
func (e *sentryExporter) dropChunks(ctx context.Context, reason string, chunks, samples int) {
	attrs := metric.WithAttributes(attribute.String("reason", reason))
	e.telemetry.ExporterSentryprofileChunksDropped.Add(ctx, int64(chunks), attrs)
	e.telemetry.ExporterSentryprofileSamplesDropped.Add(ctx, int64(samples), attrs)
}

// recordTranslatorDrops counts what the translator refused and logs one line
// per reason, so that a batch of bad profiles does not flood the log.
func (e *sentryExporter) recordTranslatorDrops(ctx context.Context, drops []profilesout.Drop) {
	type tally struct {
		chunks, samples int
		first           error
	}
	byReason := map[sentry.Reason]*tally{}
	var reasons []sentry.Reason
	for _, d := range drops {
		t, ok := byReason[d.Reason]
		if !ok {
			t = &tally{first: d.Err}
			byReason[d.Reason] = t
			reasons = append(reasons, d.Reason)
		}
		if !d.Partial {
			t.chunks++
		}
		t.samples += d.Samples
	}
	for _, r := range reasons {
		t := byReason[r]
		e.dropChunks(ctx, string(r), t.chunks, t.samples)
		e.logger.Warn("Profile data Sentry would reject was dropped",
			zap.String("reason", string(r)), zap.Int("chunks", t.chunks), zap.Int("samples", t.samples), zap.Error(t.first))
	}
}

// resourcesOf copies the listed resources, with the whole dictionary they
// index into, into a new request.
func resourcesOf(pd pprofile.Profiles, indices []int) pprofile.Profiles {
	out := pprofile.NewProfiles()
	pd.Dictionary().CopyTo(out.Dictionary())
	rps := pd.ResourceProfiles()
	dst := out.ResourceProfiles()
	dst.EnsureCapacity(len(indices))
	for _, i := range indices {
		rps.At(i).CopyTo(dst.AppendEmpty())
	}
	return out
}

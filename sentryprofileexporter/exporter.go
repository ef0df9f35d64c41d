package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumererror/xconsumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
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
)

type sentryExporter struct {
	cfg        *Config
	settings   component.TelemetrySettings
	logger     *zap.Logger
	telemetry  *metadata.TelemetryBuilder
	router     *router
	exportOpts translator.ExportOptions
	sdk        envelopeSDK
	userAgent  string
	client     *http.Client // built in start, where extensions (auth, middlewares) are known
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
	return &sentryExporter{
		cfg:       cfg,
		settings:  set.TelemetrySettings,
		logger:    set.Logger,
		telemetry: tb,
		router:    r,
		exportOpts: translator.ExportOptions{
			DefaultPlatform:     cfg.Platform,
			SDKName:             sdkName,
			SDKVersion:          version,
			DefaultSampleRateHz: cfg.SampleRateHz,
			DefaultRelease:      cfg.DefaultRelease,
			DefaultEnvironment:  cfg.DefaultEnvironment,
			InstanceID:          collectorInstanceID(set),
			ChunkWindow:         cfg.ChunkWindow.Nanoseconds(),
			Platforms:           translator.NewPlatformMemory(platformMemorySize),
		},
		sdk: envelopeSDK{name: sdkName, version: version},
		userAgent: fmt.Sprintf("%s/%s (%s; %s/%s)",
			sdkName, version, set.BuildInfo.Description, runtime.GOOS, runtime.GOARCH),
	}, nil
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

// resourcePlan is what one resource of a request turns into: the envelopes
// for its project. A resource is the unit of delivery: either all of its
// chunks are accepted, or the whole resource is retried.
type resourcePlan struct {
	index     int   // in pd.ResourceProfiles()
	resources []int // every resource whose samples the chunks hold, index first
	project   *project
	batches   []envelopeBatch
	chunks    int
	samples   int
}

// pushProfiles converts a request to chunks and delivers them resource by
// resource.
//
// Exactly-once within a request: when some resources were accepted (or
// dropped for good) and others failed with a retryable error, the error
// carries a copy of only the failed resources (xconsumererror.Profiles), so
// the retry resends nothing Sentry already has.
func (e *sentryExporter) pushProfiles(ctx context.Context, pd pprofile.Profiles) error {
	chunks, drops := translator.FromProfiles(pd, e.exportOpts)
	e.recordTranslatorDrops(ctx, drops)
	plans := e.plan(ctx, pd, chunks)

	var (
		retry     []int
		retryErrs []error
		permErrs  []error
		delay     time.Duration
		failing   = map[*project]delivery{} // projects that failed in this push: not tried again until the retry
	)
	for _, rp := range plans {
		d, attempted, unsent := e.deliver(ctx, rp, failing)
		switch {
		case d.err == nil:
		case d.permanent:
			// Envelopes of the resource that Sentry accepted before the
			// rejection are counted as sent, not again as dropped.
			e.dropChunks(ctx, cmp.Or(d.reason, reasonRejected), unsent.chunks, unsent.samples)
			e.logger.Error("Sentry rejected profile chunks; dropping them",
				zap.String("dsn", rp.project.name), zap.Int("chunks", unsent.chunks), zap.Error(d.err))
			permErrs = append(permErrs, d.err)
		default:
			retry = append(retry, rp.resources...)
			if attempted {
				retryErrs = append(retryErrs, d.err)
			}
			delay = max(delay, d.delay)
		}
	}

	if len(retry) == 0 {
		if len(permErrs) > 0 {
			return consumererror.NewPermanent(errors.Join(permErrs...))
		}
		return nil
	}
	err := errors.Join(retryErrs...)
	if delay > 0 {
		err = exporterhelper.NewThrottleRetry(err, delay)
	}
	if len(retry) < pd.ResourceProfiles().Len() {
		sort.Ints(retry)
		return xconsumererror.NewProfiles(err, resourcesOf(pd, retry))
	}
	return err
}

// plan groups the chunks by resource, encodes them, and picks each
// resource's project. Chunks that Sentry would refuse, and resources without
// a project, are dropped here.
func (e *sentryExporter) plan(ctx context.Context, pd pprofile.Profiles, chunks []translator.Chunk) []resourcePlan {
	byResource := map[int][]encodedChunk{}
	members := map[int][]int{}
	var order []int
	tooLarge, tooLargeSamples := 0, 0
	for _, c := range chunks {
		payload := sentry.AppendChunkJSON(nil, c.Profile)
		if len(payload) > maxItemBytes {
			tooLarge++
			tooLargeSamples += len(c.Profile.Samples)
			continue
		}
		if _, ok := byResource[c.ResourceIndex]; !ok {
			order = append(order, c.ResourceIndex)
			members[c.ResourceIndex] = c.Resources
			if len(c.Resources) == 0 {
				members[c.ResourceIndex] = []int{c.ResourceIndex}
			}
		}
		byResource[c.ResourceIndex] = append(byResource[c.ResourceIndex],
			encodedChunk{chunkID: c.Profile.ChunkID, platform: c.Profile.Platform, payload: payload, samples: len(c.Profile.Samples)})
	}
	if tooLarge > 0 {
		e.dropChunks(ctx, string(sentry.ReasonExceedSizeLimit), tooLarge, tooLargeSamples)
		e.logger.Warn("Profile chunks over Sentry's item size limit dropped",
			zap.Int("chunks", tooLarge), zap.Int("limit_bytes", maxItemBytes))
	}
	sort.Ints(order)

	rps := pd.ResourceProfiles()
	plans := make([]resourcePlan, 0, len(order))
	for _, i := range order {
		encoded := byResource[i]
		samples := 0
		for _, c := range encoded {
			samples += c.samples
		}
		p := e.router.route(rps.At(i).Resource())
		if p == nil {
			e.dropChunks(ctx, reasonNoDSN, len(encoded), samples)
			e.logger.Warn("No DSN for resource; dropping its profile chunks",
				zap.String("routing_attribute", e.router.attribute), zap.Int("chunks", len(encoded)))
			continue
		}
		plans = append(plans, resourcePlan{index: i, resources: members[i], project: p,
			batches: groupByCategory(encoded), chunks: len(encoded), samples: samples})
	}
	return plans
}

// chunkCount is a number of chunks and the samples in them.
type chunkCount struct{ chunks, samples int }

// deliver posts the envelopes of one resource unless its project is rate
// limited for one of them or already failed in this push. attempted reports
// whether a request was made; unsent counts the chunks of the envelopes
// that were not accepted.
func (e *sentryExporter) deliver(ctx context.Context, rp resourcePlan, failing map[*project]delivery) (d delivery, attempted bool, unsent chunkCount) {
	p := rp.project
	unsent = chunkCount{chunks: rp.chunks, samples: rp.samples}
	if d, ok := failing[p]; ok {
		return d, false, unsent
	}
	now := time.Now()
	// The whole resource waits when one of its categories is limited, so
	// that a resource is never half delivered.
	for _, b := range rp.batches {
		if wait := p.limits.RetryAfter(b.category, now); wait > 0 {
			return delivery{err: fmt.Errorf("%s: category %s is rate limited for %s", p.name, b.category, wait), delay: wait}, true, unsent
		}
	}
	for _, b := range rp.batches {
		body := encodeEnvelope(b, p, e.sdk, now)
		d := e.post(ctx, p, b.category, body)
		if d.err != nil {
			if !d.permanent && !d.rateLimited {
				failing[p] = d
			}
			return d, true, unsent
		}
		e.telemetry.ExporterSentryprofileChunksSent.Add(ctx, int64(len(b.chunks)))
		samples := 0
		for _, c := range b.chunks {
			samples += c.samples
		}
		e.telemetry.ExporterSentryprofileSamplesSent.Add(ctx, int64(samples))
		e.telemetry.ExporterSentryprofileSentBytes.Add(ctx, int64(len(body)))
		unsent.chunks -= len(b.chunks)
		unsent.samples -= samples
	}
	return delivery{}, true, unsent
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
func (e *sentryExporter) recordTranslatorDrops(ctx context.Context, drops []translator.Drop) {
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
		t.chunks++
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

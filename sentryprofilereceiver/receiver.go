package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/collector/receiver/receiverhelper/xreceiverhelper"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// sentryReceiver owns the HTTP server and the parts with a lifecycle: the
// chunk hold and the forwarder's spool.
type sentryReceiver struct {
	cfg       *Config
	settings  receiver.Settings
	handler   *envelopeHandler
	router    *router
	telemetry *metadata.TelemetryBuilder
	gzip      *gzipDecoder

	server   *http.Server
	listener net.Listener
	serving  sync.WaitGroup
}

var _ component.Component = (*sentryReceiver)(nil)

// newReceiver builds the receiver; its pipelines are set on its router by
// the factory, before Start.
func newReceiver(cfg *Config, set receiver.Settings) (*sentryReceiver, error) {
	obsrep, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "http",
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, fmt.Errorf("sentryprofile: obsreport: %w", err)
	}
	// The profiles signal's counts go through xreceiverhelper, which
	// records accepted and refused samples per sample type.
	profilesObsrep, err := xreceiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "http",
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, fmt.Errorf("sentryprofile: profiles obsreport: %w", err)
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sentryprofile: telemetry: %w", err)
	}
	mode := sentry.ModeLenient
	if cfg.Validation == ValidationRelay {
		mode = sentry.ModeRelay
	}
	slots := make(envelopeSlots, cfg.MaxConcurrentEnvelopes)
	pool := newEnvelopeStatePool(min(runtime.GOMAXPROCS(0), cfg.MaxConcurrentEnvelopes))
	rt := &router{
		cfg: cfg, logger: set.Logger, telemetry: tb, obsrep: obsrep, profilesObsrep: profilesObsrep, drops: newDropLog(set.Logger), mode: mode,
		index: newSpanIndex(cfg.Links), hold: newChunkHold(cfg.Links), slots: slots, pool: pool,
		events: newEventResources(rememberedEvents, rememberEventsFor),
	}
	if err := registerSpanIndexMetrics(tb, rt.index); err != nil {
		return nil, fmt.Errorf("sentryprofile: telemetry: %w", err)
	}
	seconds := strconv.FormatInt(int64((cfg.RetryAfter+time.Second-1)/time.Second), 10) // whole seconds, rounded up
	r := &sentryReceiver{cfg: cfg, settings: set, router: rt, telemetry: tb, gzip: newGzipDecoder(runtime.GOMAXPROCS(0))}
	r.handler = &envelopeHandler{
		cfg: cfg, logger: set.Logger, auth: newAuthenticator(cfg), router: rt, slots: slots, pool: pool,
		bodies:     rawBodyDecoders{gzip: r.gzip},
		pace:       pacing{grace: bodyGrace, minRate: bodyMinRate, limit: cfg.ServerConfig.ReadTimeout},
		retryAfter: seconds,
		// No category list means every category: while the pipeline pushes
		// back, any envelope still costs a read, so the SDK is asked to hold
		// them all. Scope "organization" is what Relay uses for quotas that
		// are not tied to one key or project.
		rateLimits: seconds + "::organization",
	}
	return r, nil
}

// Start listens on the endpoint and serves until Shutdown. An error after
// Start returned (the listener failing) is reported as a fatal status.
func (r *sentryReceiver) Start(ctx context.Context, host component.Host) error {
	if err := r.startForwarding(ctx, host); err != nil {
		return err
	}
	server, err := r.newServer(ctx, host)
	if err != nil {
		return errors.Join(fmt.Errorf("sentryprofile: http server: %w", err), r.handler.forward.Shutdown(ctx))
	}
	listener, err := r.cfg.ServerConfig.ToListener(ctx)
	if err != nil {
		return errors.Join(fmt.Errorf("sentryprofile: listen on %q: %w", r.cfg.ServerConfig.NetAddr.Endpoint, err),
			r.handler.forward.Shutdown(ctx))
	}
	r.server, r.listener = server, listener
	if r.router.profiles != nil {
		r.router.hold.Start(r.router.releaseHeld)
	}
	// The bound address, not the endpoint: they differ when the port is 0.
	r.settings.Logger.Info("Starting HTTP server", zap.String("endpoint", listener.Addr().String()))
	r.serving.Add(1)
	go r.serve(host, server, listener)
	return nil
}

// newServer builds the HTTP server: confighttp's chain with the body
// decoders (raw bodies pass through when forwarding), the forward's path
// cleaning, and the pacer outermost, where it counts the body as it comes
// off the connection.
func (r *sentryReceiver) newServer(ctx context.Context, host component.Host) (*http.Server, error) {
	algorithms := r.cfg.ServerConfig.CompressionAlgorithms
	decoders := serverDecoders(algorithms)
	routes := r.gzip.gzipBodies(r.handler.routes(), r.cfg.ServerConfig.MaxRequestBodySize, r.handler.decodeError)
	if r.handler.forward != nil {
		decoders = passThroughDecoders(algorithms)
		routes = r.handler.routes()
	}
	opts := []confighttp.ToServerOption{confighttp.WithErrorHandler(r.handler.decodeError)}
	for name, dec := range decoders {
		opts = append(opts, confighttp.WithDecoder(name, dec))
	}
	server, err := r.cfg.ServerConfig.ToServer(ctx, host.GetExtensions(), r.settings.TelemetrySettings, routes, opts...)
	if err != nil {
		return nil, err
	}
	// Read again: ToServer fills in the default algorithms when none are
	// configured.
	r.handler.encodings = supportedEncodings(r.cfg.ServerConfig.CompressionAlgorithms, decoders)
	if r.handler.forward != nil {
		server.Handler = cleanAPIPaths(r.handler.forward, server.Handler)
	}
	server.Handler = r.handler.pace.wrap(server.Handler)
	return server, nil
}

// serve runs the server until Shutdown; a failure before is fatal.
func (r *sentryReceiver) serve(host component.Host, server *http.Server, listener net.Listener) {
	defer r.serving.Done()
	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
	}
}

// startForwarding builds the forwarder of the `forward:` section, with its
// spool when forward::storage names one.
func (r *sentryReceiver) startForwarding(ctx context.Context, host component.Host) error {
	fwd := r.cfg.Forward.Get()
	if fwd == nil {
		return nil
	}
	client, err := fwd.ClientConfig.ToClient(ctx, host.GetExtensions(), r.settings.TelemetrySettings)
	if err != nil {
		return fmt.Errorf("sentryprofile: forward client: %w", err)
	}
	base, _ := url.Parse(fwd.ClientConfig.Endpoint) // Validate checked it
	f := forward.New(forward.Settings{Upstream: base, Client: client, Logger: r.settings.Logger,
		Telemetry: r.telemetry, RetryAfter: r.handler.retryAfter})
	if fwd.Storage != nil {
		store, err := spoolStorage(ctx, host, *fwd.Storage, r.settings.ID)
		if err != nil {
			return fmt.Errorf("sentryprofile: %w", err)
		}
		if err := f.StartSpool(ctx, store, fwd.SpoolMaxBytes); err != nil {
			_ = store.Close(ctx)
			return fmt.Errorf("sentryprofile: %w", err)
		}
	}
	r.handler.forward = f
	r.settings.Logger.Info("Forwarding /api/ requests", zap.String("upstream", base.Redacted()))
	return nil
}

// spoolStorage is the storage client of the extension forward::storage
// names.
func spoolStorage(ctx context.Context, host component.Host, id component.ID, receiverID component.ID) (storage.Client, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("forward::storage: no extension %q is configured", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("forward::storage: extension %q is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindReceiver, receiverID, "forward")
	if err != nil {
		return nil, fmt.Errorf("forward::storage: %w", err)
	}
	return client, nil
}

// Shutdown stops accepting envelopes and waits for the ones in flight; it is
// a no-op before Start.
func (r *sentryReceiver) Shutdown(ctx context.Context) error {
	var err error
	if r.server != nil {
		err = r.server.Shutdown(ctx)
	}
	r.serving.Wait()
	// Chunks still held go down the pipeline, which stops after its
	// receivers.
	r.router.hold.Shutdown(ctx)
	// After the server: no request is stored any more.
	err = errors.Join(err, r.handler.forward.Shutdown(ctx))
	r.telemetry.Shutdown()
	return err
}

// decodeError answers confighttp's refusals (body decoding, auth extension)
// in Relay's JSON shape. confighttp says 400 for an encoding it does not
// know; 415 tells the client the encoding, not the data, is the problem.
func (h *envelopeHandler) decodeError(w http.ResponseWriter, req *http.Request, msg string, status int) {
	if status == http.StatusBadRequest && h.encodings != nil && !h.encodings[req.Header.Get("Content-Encoding")] {
		status = http.StatusUnsupportedMediaType
		msg = "unsupported Content-Encoding " + req.Header.Get("Content-Encoding")
	}
	writeError(w, &requestError{status: status, detail: msg})
}

// supportedEncodings mirrors confighttp's decoder table: the configured
// algorithms plus ours.
func supportedEncodings(configured []string, ours map[string]decoderFunc) map[string]bool {
	if configured == nil {
		return nil
	}
	set := make(map[string]bool, len(configured)+len(ours))
	for _, e := range configured {
		set[e] = true
	}
	for e := range ours {
		set[e] = true
	}
	return set
}

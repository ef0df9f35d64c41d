package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/andybalholm/brotli"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
)

// decoders are the Content-Encodings the receiver decodes itself, in place
// of or besides confighttp's. confighttp bounds their output by
// max_request_body_size like its own.
func (r *sentryReceiver) decoders() map[string]func(io.ReadCloser) (io.ReadCloser, error) {
	decoders := map[string]func(io.ReadCloser) (io.ReadCloser, error){
		// Relay accepts the legacy name of gzip.
		"x-gzip": r.gzip.decode,
		// sentry-python sends br when the brotli module is installed.
		"br": func(body io.ReadCloser) (io.ReadCloser, error) {
			return readCloser{Reader: brotli.NewReader(body), Closer: body}, nil
		},
		// "No encoding", spelled out; a nil body tells confighttp to keep
		// the request body as it is.
		"identity": func(io.ReadCloser) (io.ReadCloser, error) { return nil, nil },
	}
	// gzip itself only where confighttp would decode it.
	if algorithms := r.cfg.ServerConfig.CompressionAlgorithms; algorithms == nil || slices.Contains(algorithms, "gzip") {
		decoders["gzip"] = r.gzip.decode
	}
	return decoders
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sentryReceiver owns the HTTP server; the envelopeHandler does the work.
type sentryReceiver struct {
	cfg       *Config
	settings  receiver.Settings
	handler   *envelopeHandler
	telemetry *metadata.TelemetryBuilder

	server   *http.Server
	listener net.Listener
	// encodings are the Content-Encodings the server decodes, known once
	// confighttp has applied its defaults.
	encodings map[string]bool
	gzip      gzipDecoder
	serving   sync.WaitGroup
}

var _ component.Component = (*sentryReceiver)(nil)

func newReceiver(cfg *Config, set receiver.Settings, next xconsumer.Profiles) (*sentryReceiver, error) {
	obsrep, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "http",
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, fmt.Errorf("sentryprofile: obsreport: %w", err)
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sentryprofile: telemetry: %w", err)
	}
	handler := newEnvelopeHandler(cfg, set.Logger, next, obsrep, tb)
	if err := handler.links.registerMetrics(tb); err != nil {
		return nil, fmt.Errorf("sentryprofile: telemetry: %w", err)
	}
	return &sentryReceiver{
		cfg:       cfg,
		settings:  set,
		handler:   handler,
		telemetry: tb,
	}, nil
}

// Start listens on the endpoint and serves until Shutdown. An error after
// Start returned (the listener failing) is reported as a fatal status.
func (r *sentryReceiver) Start(ctx context.Context, host component.Host) error {
	opts := []confighttp.ToServerOption{confighttp.WithErrorHandler(r.decodeError)}
	decoders := r.decoders()
	for name, dec := range decoders {
		opts = append(opts, confighttp.WithDecoder(name, dec))
	}
	server, err := r.cfg.ServerConfig.ToServer(ctx, host.GetExtensions(), r.settings.TelemetrySettings, r.handler.routes(), opts...)
	if err != nil {
		return fmt.Errorf("sentryprofile: http server: %w", err)
	}
	r.encodings = supportedEncodings(r.cfg.ServerConfig.CompressionAlgorithms, decoders)
	listener, err := r.cfg.ServerConfig.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("sentryprofile: listen on %q: %w", r.cfg.ServerConfig.NetAddr.Endpoint, err)
	}
	if fwd := r.cfg.Forward.Get(); fwd != nil {
		client, err := fwd.ClientConfig.ToClient(ctx, host.GetExtensions(), r.settings.TelemetrySettings)
		if err != nil {
			_ = listener.Close()
			return fmt.Errorf("sentryprofile: forward client: %w", err)
		}
		base, _ := url.Parse(fwd.ClientConfig.Endpoint) // Validate checked it
		r.handler.forward = &forwarder{
			base: base, client: client, logger: r.settings.Logger, telemetry: r.telemetry,
			retryAfter: r.handler.retryAfter,
		}
		if fwd.Storage != nil {
			if err := r.handler.forward.startSpool(ctx, host, fwd, r.settings); err != nil {
				_ = listener.Close()
				return fmt.Errorf("sentryprofile: %w", err)
			}
		}
		// Before confighttp's decompression: the upstream gets the body
		// as it came.
		server.Handler = r.handler.withForwarding(server.Handler)
		r.settings.Logger.Info("Forwarding /api/ requests", zap.String("upstream", base.Redacted()))
	}
	r.server, r.listener = server, listener
	if r.handler.next != nil {
		r.handler.links.start(r.handler.releaseHeld)
	}
	// The bound address, not the endpoint: they differ when the port is 0.
	r.settings.Logger.Info("Starting HTTP server", zap.String("endpoint", listener.Addr().String()))

	r.serving.Add(1)
	go func() {
		defer r.serving.Done()
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	}()
	return nil
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
	r.handler.links.shutdown(ctx, r.handler.releaseHeld)
	// After the server: no request is stored any more.
	err = errors.Join(err, r.handler.forward.stopSpool(ctx))
	r.telemetry.Shutdown()
	return err
}

// decodeError answers confighttp's refusals (body decoding, auth extension)
// in Relay's JSON shape. confighttp says 400 for an encoding it does not
// know; 415 tells the client the encoding, not the data, is the problem.
func (r *sentryReceiver) decodeError(w http.ResponseWriter, req *http.Request, msg string, status int) {
	if status == http.StatusBadRequest && r.encodings != nil && !r.encodings[req.Header.Get("Content-Encoding")] {
		status = http.StatusUnsupportedMediaType
		msg = "unsupported Content-Encoding " + req.Header.Get("Content-Encoding")
	}
	writeError(w, &requestError{status: status, detail: msg})
}

// supportedEncodings mirrors confighttp's decoder table: the configured
// algorithms plus ours.
func supportedEncodings(configured []string, ours map[string]func(io.ReadCloser) (io.ReadCloser, error)) map[string]bool {
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

package sentryprofilereceiver // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
)

// NewFactory returns the factory of the sentryprofile receiver.
func NewFactory() xreceiver.Factory {
	shared := &sharedReceivers{byConfig: map[*Config]*sharedReceiver{}}
	return xreceiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xreceiver.WithTraces(shared.createTraces, metadata.TracesStability),
		xreceiver.WithProfiles(shared.createProfiles, metadata.ProfilesStability),
		xreceiver.WithLogs(shared.createLogs, metadata.LogsStability),
		xreceiver.WithMetrics(shared.createMetrics, metadata.MetricsStability),
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
		Forward:                configoptional.Default(defaultForward()),
		ForwardProfiles:        true,
		Links: LinksConfig{
			Enabled:             true,
			Wait:                defaultLinksWait,
			MaxHeldChunks:       1000,
			MaxHeldBytes:        64 << 20,
			SpanTTL:             3 * time.Minute,
			MaxSpans:            200_000,
			MaxSpansPerProfiler: 20_000,
			MaxProfilers:        10_000,
		},
	}
}

// defaultForwardClient is the upstream client when `forward:` is set: long
// enough for Relay to take a large attachment, short enough that an SDK
// waiting on a dead upstream gets an answer.
func defaultForwardClient() confighttp.ClientConfig {
	c := confighttp.NewDefaultClientConfig()
	c.Timeout = 30 * time.Second
	return c
}

// defaultLinksWait: the SDKs measured post a chunk at most a few
// milliseconds before the spans it covers (node 11 streaming: with them;
// static transactions: ~6 ms after the chunk); the rest of the wait is for
// spans still running when their chunk is cut, which end (and are sent)
// within a few seconds for the requests and jobs most services trace.
const defaultLinksWait = 5 * time.Second

// sharedReceivers makes one receiver of a configuration serve every signal
// its pipelines ask for: a traces pipeline and a profiles pipeline naming the
// same `sentryprofile` receiver share its endpoint (as do logs and metrics
// pipelines), and each envelope feeds every one of them. The map lives in the factory, so two factories share nothing.
type sharedReceivers struct {
	mu       sync.Mutex
	byConfig map[*Config]*sharedReceiver
}

// sharedReceiver is the one receiver of a configuration, handed to each
// pipeline that names it as a handle.
//
// It starts when the last of its handles starts and stops when the first
// stops. The collector starts every component after the components it
// feeds and stops it before them, so at those two moments every pipeline
// behind every handle runs: envelopes only arrive once all of them can
// take their signal, and the chunks held for span links and the forward
// spool are flushed while they still can. (Stopping with the last handle
// instead would flush into a pipeline whose exporters the collector may
// already have stopped: it orders the shutdown of two pipelines by a
// topological sort, not by pipeline.)
type sharedReceiver struct {
	owner   *sharedReceivers
	cfg     *Config
	inner   *sentryReceiver
	handles int // created
	started int // handles started
	running bool
	stopped bool
}

// handle is what one pipeline holds: Start is counted once per handle.
type handle struct {
	shared  *sharedReceiver
	started bool
}

func (s *sharedReceivers) get(cfg *Config, set receiver.Settings) (*sharedReceiver, error) {
	if r, ok := s.byConfig[cfg]; ok {
		return r, nil
	}
	inner, err := newReceiver(cfg, set)
	if err != nil {
		return nil, err
	}
	r := &sharedReceiver{owner: s, cfg: cfg, inner: inner}
	s.byConfig[cfg] = r
	return r, nil
}

func (s *sharedReceivers) createProfiles(_ context.Context, set receiver.Settings, cfg component.Config, next xconsumer.Profiles) (xreceiver.Profiles, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.get(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	r.inner.router.profiles = next
	r.handles++
	return &handle{shared: r}, nil
}

func (s *sharedReceivers) createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.get(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	r.inner.router.traces = next
	r.handles++
	return &handle{shared: r}, nil
}

func (s *sharedReceivers) createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.get(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	r.inner.router.logs = next
	r.handles++
	return &handle{shared: r}, nil
}

func (s *sharedReceivers) createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.get(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	r.inner.router.metrics = next
	r.handles++
	return &handle{shared: r}, nil
}

// Start starts the shared receiver when it is the last of its handles to
// start.
func (h *handle) Start(ctx context.Context, host component.Host) error {
	r := h.shared
	r.owner.mu.Lock()
	defer r.owner.mu.Unlock()
	if h.started {
		return nil
	}
	h.started = true
	r.started++
	if !r.lastToStart() {
		return nil
	}
	if err := r.inner.Start(ctx, host); err != nil {
		return err
	}
	r.running = true
	return nil
}

// lastToStart reports whether every handle has started and the receiver
// has neither started nor stopped yet. Callers hold owner.mu.
func (r *sharedReceiver) lastToStart() bool {
	return r.started >= r.handles && !r.running && !r.stopped
}

// Shutdown stops the shared receiver when it is the first of its handles to
// stop (the later ones find it stopped), and forgets it so a new pipeline of
// the same configuration (a reload) gets a fresh one.
func (h *handle) Shutdown(ctx context.Context) error {
	r := h.shared
	r.owner.mu.Lock()
	defer r.owner.mu.Unlock()
	if r.stopped {
		return nil
	}
	r.stopped = true
	if r.owner.byConfig[r.cfg] == r {
		delete(r.owner.byConfig, r.cfg)
	}
	if !r.running {
		return nil
	}
	r.running = false
	return r.inner.Shutdown(ctx)
}

package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
)

// sharedExporters gives every pipeline of one exporter configuration (the
// profiles, logs, traces and metrics pipelines naming the same
// `sentryprofile` exporter) the same sentryExporter: one HTTP client, and
// one set of projects whose rate limits a 429 on any signal updates, so
// that a limit on every category learnt from an error event holds back the
// metrics too, as a Sentry SDK's transport does.
type sharedExporters struct {
	mu       sync.Mutex
	byConfig map[*Config]*sharedExporter
}

// sharedExporter is one sentryExporter and the pipelines using it.
type sharedExporter struct {
	*sentryExporter
	owners *sharedExporters
	cfg    *Config

	mu      sync.Mutex
	refs    int  // pipelines created and not yet shut down
	started bool // start ran (once, for the first pipeline started)
}

// get returns the exporter of cfg, creating it for its first pipeline.
func (s *sharedExporters) get(cfg *Config, set exporter.Settings) (*sharedExporter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if shared, ok := s.byConfig[cfg]; ok {
		shared.mu.Lock()
		shared.refs++
		shared.mu.Unlock()
		return shared, nil
	}
	exp, err := newExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	shared := &sharedExporter{sentryExporter: exp, owners: s, cfg: cfg, refs: 1}
	s.byConfig[cfg] = shared
	return shared, nil
}

func (shared *sharedExporter) start(ctx context.Context, host component.Host) error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.started {
		return nil
	}
	if err := shared.sentryExporter.start(ctx, host); err != nil {
		return err
	}
	shared.started = true
	return nil
}

// shutdown releases one pipeline; the last one shuts the exporter down and
// forgets it, so that a collector reloading its configuration builds anew.
func (shared *sharedExporter) shutdown(ctx context.Context) error {
	shared.owners.mu.Lock()
	defer shared.owners.mu.Unlock()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.refs--
	if shared.refs > 0 {
		return nil
	}
	if shared.owners.byConfig[shared.cfg] == shared {
		delete(shared.owners.byConfig, shared.cfg)
	}
	return shared.sentryExporter.shutdown(ctx)
}

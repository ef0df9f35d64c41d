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
	if x, ok := s.byConfig[cfg]; ok {
		x.mu.Lock()
		x.refs++
		x.mu.Unlock()
		return x, nil
	}
	exp, err := newExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	x := &sharedExporter{sentryExporter: exp, owners: s, cfg: cfg, refs: 1}
	s.byConfig[cfg] = x
	return x, nil
}

func (x *sharedExporter) start(ctx context.Context, host component.Host) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.started {
		return nil
	}
	if err := x.sentryExporter.start(ctx, host); err != nil {
		return err
	}
	x.started = true
	return nil
}

// shutdown releases one pipeline; the last one shuts the exporter down and
// forgets it, so that a collector reloading its configuration builds anew.
func (x *sharedExporter) shutdown(ctx context.Context) error {
	x.owners.mu.Lock()
	defer x.owners.mu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.refs--
	if x.refs > 0 {
		return nil
	}
	if x.owners.byConfig[x.cfg] == x {
		delete(x.owners.byConfig, x.cfg)
	}
	return x.sentryExporter.shutdown(ctx)
}

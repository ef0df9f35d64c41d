package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// sharedCores makes one frameProcessor of a configuration serve every
// pipeline that names it: a profiles pipeline and a logs pipeline with the
// same `symbolication` processor share its resolvers, their artifact
// caches, the frame cache and their directory scans, so a source map or a
// debug file is parsed once for both signals. The map lives in the
// factory, so two factories share nothing.
type sharedCores struct {
	mu       sync.Mutex
	byConfig map[*Config]*sharedCore
}

// sharedCore is the one frameProcessor of a configuration. It starts with
// the first of its pipelines and stops with the last: until then another
// pipeline may still hand it batches.
type sharedCore struct {
	owner   *sharedCores
	cfg     *Config
	p       *frameProcessor
	started int // pipelines started and not yet stopped
	stopped bool
}

// coreHandle is what one pipeline's processor holds.
type coreHandle struct {
	core    *sharedCore
	started bool
}

func newSharedCores() *sharedCores {
	return &sharedCores{byConfig: map[*Config]*sharedCore{}}
}

// handle returns a new pipeline's handle on the configuration's core, made
// on the first call.
func (s *sharedCores) handle(cfg *Config, set component.TelemetrySettings) (*coreHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byConfig[cfg]
	if !ok {
		p, err := newFrameProcessor(cfg, set)
		if err != nil {
			return nil, err
		}
		c = &sharedCore{owner: s, cfg: cfg, p: p}
		s.byConfig[cfg] = c
	}
	return &coreHandle{core: c}, nil
}

// start starts the core with the first of its pipelines.
func (h *coreHandle) start(ctx context.Context, host component.Host) error {
	c := h.core
	c.owner.mu.Lock()
	defer c.owner.mu.Unlock()
	if h.started || c.stopped {
		return nil
	}
	h.started = true
	c.started++
	if c.started > 1 {
		return nil
	}
	return c.p.start(ctx, host)
}

// shutdown stops the core with the last of its started pipelines (or with
// a pipeline that never started when none did), and forgets it so that a
// new pipeline of the same configuration (a reload) gets a fresh one.
func (h *coreHandle) shutdown(ctx context.Context) error {
	c := h.core
	c.owner.mu.Lock()
	defer c.owner.mu.Unlock()
	if h.started {
		h.started = false
		c.started--
	}
	if c.started > 0 || c.stopped {
		return nil
	}
	c.stopped = true
	if c.owner.byConfig[c.cfg] == c {
		delete(c.owner.byConfig, c.cfg)
	}
	return c.p.shutdown(ctx)
}

package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter/internal/metadata"
	"github.com/sentryprofile/otelcol-sentryprofile/translator"
)

// reasonEnqueueFailed: merged profiles the sending queue refused.
const reasonEnqueueFailed = "enqueue_failed"

// merger sits in front of the exporterhelper exporter (queue, retries,
// pushProfiles) and holds incoming profiles for up to the flush interval,
// merged into one request, so that the translator sees many consecutive
// profiles of each profiler at once and makes chunks of up to the chunk
// window instead of one per report.
//
// What waits here is in memory only: it is acknowledged to the receiver
// before it is in the sending queue. Shutdown flushes it into the queue,
// which a file_storage queue then persists; a crash loses at most the last
// flush interval (a persistent queue keeps everything that was flushed).
// The queue's own metrics (otelcol_exporter_sent_profile_samples …) count
// the merged requests when they are flushed.
type merger struct {
	next       xexporter.Profiles
	interval   time.Duration
	maxSamples int
	logger     *zap.Logger
	telemetry  *metadata.TelemetryBuilder

	mu       sync.Mutex
	pending  pprofile.Profiles
	has      bool
	records  int // sample records in pending
	timer    *time.Timer
	stopped  bool
	inFlight sync.WaitGroup // flushes started by the timer
}

var _ xexporter.Profiles = (*merger)(nil)

func newMerger(next xexporter.Profiles, cfg ChunkingConfig, logger *zap.Logger, tb *metadata.TelemetryBuilder) *merger {
	return &merger{next: next, interval: cfg.FlushInterval, maxSamples: cfg.MaxSamples, logger: logger, telemetry: tb}
}

func (m *merger) Start(ctx context.Context, host component.Host) error {
	return m.next.Start(ctx, host)
}

func (m *merger) Capabilities() consumer.Capabilities {
	// Incoming profiles are copied before they are merged.
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeProfiles adds pd to the waiting request. It fails only when pd
// cannot be merged (indices outside its dictionary) and the queue refuses
// it on its own.
func (m *merger) ConsumeProfiles(ctx context.Context, pd pprofile.Profiles) error {
	own := pprofile.NewProfiles()
	pd.CopyTo(own)
	records := own.SampleCount()

	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return m.next.ConsumeProfiles(ctx, own)
	}
	if !m.has {
		m.pending, m.has, m.records = own, true, records
		m.timer = time.AfterFunc(m.interval, m.flushOnTimer)
	} else if err := own.MergeTo(m.pending); err != nil {
		m.mu.Unlock()
		// Malformed input: sent on its own, so that the translator drops
		// what is malformed, counted with Relay's reason, and nothing else
		// waiting here is touched.
		m.logger.Debug("Profiles that cannot be merged are sent on their own", zap.Error(err))
		fresh := pprofile.NewProfiles()
		pd.CopyTo(fresh)
		return m.next.ConsumeProfiles(ctx, fresh)
	} else {
		m.records += records
	}
	var full pprofile.Profiles
	flush := false
	if m.records >= m.maxSamples {
		full, flush = m.take()
	}
	m.mu.Unlock()
	if flush {
		m.flush(ctx, full)
	}
	return nil
}

// take empties the waiting request; m.mu is held.
func (m *merger) take() (pprofile.Profiles, bool) {
	if !m.has {
		return pprofile.Profiles{}, false
	}
	pd := m.pending
	m.pending, m.has, m.records = pprofile.Profiles{}, false, 0
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	return pd, true
}

func (m *merger) flushOnTimer() {
	m.mu.Lock()
	pd, ok := m.take()
	if ok {
		// Under the lock: Shutdown, which sets stopped under it, then
		// waits for every flush that took something before.
		m.inFlight.Add(1)
	}
	m.mu.Unlock()
	if ok {
		defer m.inFlight.Done()
		m.flush(context.Background(), pd)
	}
}

// flush hands a merged request to the sending queue. What the queue
// refuses is lost and counted.
func (m *merger) flush(ctx context.Context, pd pprofile.Profiles) {
	samples := translator.SampleEvents(pd)
	if err := m.next.ConsumeProfiles(ctx, pd); err != nil {
		m.telemetry.ExporterSentryprofileSamplesDropped.Add(ctx, int64(samples),
			metric.WithAttributes(attribute.String("reason", reasonEnqueueFailed)))
		m.logger.Error("Merged profiles could not enter the sending queue; dropping them",
			zap.Int("samples", samples), zap.Error(err))
	}
}

// Shutdown sends what waits into the queue, then shuts the queue down
// (which, persistent, keeps it for the next start).
func (m *merger) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.stopped = true
	pd, ok := m.take()
	m.mu.Unlock()
	if ok {
		m.flush(ctx, pd)
	}
	m.inFlight.Wait()
	return m.next.Shutdown(ctx)
}

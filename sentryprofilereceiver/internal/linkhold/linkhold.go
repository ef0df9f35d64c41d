// Package linkhold holds profile chunks for a while before they are
// translated, so that the spans their SDK sends after them are in the span
// index when their samples are linked.
//
// A Hold has one lifecycle: Start gives it the consumer that translates a
// released chunk and starts the release loop; Add holds chunks while it
// runs; Shutdown stops the loop and hands every chunk still held to the
// same consumer, once, before it returns. The receiver calls Shutdown on
// its first shutdown, while the pipelines behind it still run.
package linkhold // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/linkhold"

import (
	"context"
	"sync"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// Chunk is a chunk item waiting for its spans, with what its envelope said
// of it. Its payload is a copy: the envelope's memory goes to the next
// envelope.
type Chunk struct {
	Item      envelope.Item
	ProjectID string
	SDKName   string
	SentAt    string
	Arrived   time.Time
}

// Release translates a released chunk and sends it on. Its ctx is done
// when the receiver's shutdown deadline has passed: the chunk is then
// dropped (and counted) rather than translated.
type Release func(ctx context.Context, c Chunk)

// Limits bound a Hold: how long a chunk waits, and how many chunks and
// payload bytes wait at once.
type Limits struct {
	Wait      time.Duration
	MaxChunks int
	MaxBytes  int64
}

// Hold keeps chunks for Limits.Wait each, in arrival order, within its
// bounds.
type Hold struct {
	limits Limits
	now    func() time.Time

	mu      sync.Mutex
	release Release
	held    []Chunk // in arrival order, so in order of release
	bytes   int64
	running bool
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// New returns a Hold that is not running yet; nil when limits.Wait is not
// positive (chunks are translated at once). A nil Hold holds nothing.
func New(limits Limits) *Hold {
	if limits.Wait <= 0 {
		return nil
	}
	return &Hold{limits: limits, now: time.Now, wake: make(chan struct{}, 1)}
}

// Start runs the release loop: each chunk goes to release once its wait is
// over. A Hold starts once; later calls do nothing.
func (h *Hold) Start(release Release) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running || h.stop != nil {
		return
	}
	h.release, h.running = release, true
	h.stop, h.done = make(chan struct{}), make(chan struct{})
	go h.loop(h.stop, h.done)
}

func (h *Hold) loop(stop, done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, due := h.due()
		if due != nil {
			h.release(context.Background(), *due)
			continue
		}
		if !h.sleep(stop, timer, next) {
			return
		}
	}
}

// sleep waits until next (0: until a chunk is added) or stop; false on
// stop.
func (h *Hold) sleep(stop chan struct{}, timer *time.Timer, next time.Duration) bool {
	if next > 0 {
		timer.Reset(next)
	}
	select {
	case <-stop:
		return false
	case <-h.wake:
	case <-timer.C:
	}
	return true
}

// Add holds a copy of a chunk item; false when the Hold is not running or
// full, or the item is oversized: the caller translates it at once.
func (h *Hold) Add(item *envelope.Item, projectID, sdkName, sentAt string) bool {
	if h == nil || item.Oversized {
		return false
	}
	size := int64(len(item.Payload))
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.takesLocked(size) {
		return false
	}
	copied := *item
	copied.Payload = append([]byte(nil), item.Payload...)
	h.held = append(h.held, Chunk{Item: copied, ProjectID: projectID, SDKName: sdkName, SentAt: sentAt, Arrived: h.now()})
	h.bytes += size
	if len(h.held) == 1 {
		h.wakeLoop()
	}
	return true
}

// takesLocked reports whether a running Hold has room for one more chunk
// of size bytes. h.mu is held.
func (h *Hold) takesLocked(size int64) bool {
	return h.running && len(h.held) < h.limits.MaxChunks && h.bytes+size <= h.limits.MaxBytes
}

// wakeLoop tells the loop a first chunk is held, without waiting.
func (h *Hold) wakeLoop() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// due pops the oldest chunk if its wait is over; else it says how long
// until it is (0 when nothing is held).
func (h *Hold) due() (time.Duration, *Chunk) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held) == 0 {
		return 0, nil
	}
	if left := h.held[0].Arrived.Add(h.limits.Wait).Sub(h.now()); left > 0 {
		return left, nil
	}
	c := h.held[0]
	h.held[0] = Chunk{}
	h.held = h.held[1:]
	h.bytes -= int64(len(c.Item.Payload))
	return 0, &c
}

// Shutdown stops the release loop and releases every chunk still held,
// whatever its wait, with ctx: once ctx is done the consumer drops them.
// Add refuses from its start; later calls do nothing.
func (h *Hold) Shutdown(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	if !h.running {
		h.mu.Unlock()
		return
	}
	h.running = false
	stop, done, release := h.stop, h.done, h.release
	held := h.held
	h.held, h.bytes = nil, 0
	h.mu.Unlock()
	close(stop)
	<-done
	for _, c := range held {
		release(ctx, c)
	}
}

// Since is how long ago a chunk arrived, by the Hold's clock.
func (h *Hold) Since(c Chunk) time.Duration { return h.now().Sub(c.Arrived) }

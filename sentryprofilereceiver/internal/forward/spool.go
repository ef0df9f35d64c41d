package forward // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/forward"

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver/internal/metadata"
)

// Storage layout. Sequence numbers grow by one per request stored; the
// requests from head to tail (excluding tail) wait for delivery.
//
//	spool.meta      {"head":h,"tail":t,"bytes":b}
//	spool.r.<seq>   the request (spoolRecord encoding)
//	spool.s.<seq>   "<body bytes> <stored at, Unix ns>": what dropping the
//	                oldest needs, without reading its body
const (
	spoolMetaKey = "spool.meta"
	// Delivery retries back off from spoolMinBackoff to spoolMaxBackoff
	// when the upstream gives no Retry-After.
	spoolMinBackoff = time.Second
	spoolMaxBackoff = 5 * time.Minute
)

func spoolRecordKey(seq uint64) string { return "spool.r." + strconv.FormatUint(seq, 10) }
func spoolSizeKey(seq uint64) string   { return "spool.s." + strconv.FormatUint(seq, 10) }

type spoolMeta struct {
	Head  uint64 `json:"head"`
	Tail  uint64 `json:"tail"`
	Bytes int64  `json:"bytes"`
}

// spoolRecord is a request as it is to be sent upstream: its method, its
// path and query (resolved against the upstream at delivery), the headers
// already chosen for the upstream, and its body.
type spoolRecord struct {
	Method string      `json:"m"`
	URI    string      `json:"u"`
	Header http.Header `json:"h"`
	Body   []byte      `json:"-"`
}

// encode is a 4-byte length, the JSON of everything but the body, then the
// body as it is (no base64 for a multi-megabyte attachment).
func (r *spoolRecord) encode() ([]byte, error) {
	head, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(head)+len(r.Body))
	binary.BigEndian.PutUint32(out, uint32(len(head)))
	out = append(out, head...)
	return append(out, r.Body...), nil
}

func decodeSpoolRecord(b []byte) (*spoolRecord, error) {
	if len(b) < 4 {
		return nil, errors.New("spooled request truncated")
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, errors.New("spooled request header truncated")
	}
	var r spoolRecord
	if err := json.Unmarshal(b[4:4+n], &r); err != nil {
		return nil, fmt.Errorf("spooled request header: %w", err)
	}
	r.Body = b[4+n:]
	return &r, nil
}

// spool stores forwarded requests in a storage extension and delivers them
// in order in the background: the SDK is answered once its request is
// stored, so an upstream that is down or rate limiting costs nothing but
// delay. One request is delivered at a time (head of line), which keeps
// the order the SDK sent in.
type spool struct {
	client    storage.Client
	deliver   func(ctx context.Context, rec *spoolRecord) Answer
	maxBytes  int64
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder

	mu   sync.Mutex
	meta spoolMeta
	// lastAge is how long the request removeLocked last removed waited.
	lastAge time.Duration

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	// sleep waits d or until ctx ends; tests shorten it.
	sleep func(ctx context.Context, d time.Duration) bool
}

// openSpool reads what a previous run left and reports it in the telemetry.
func openSpool(ctx context.Context, client storage.Client, maxBytes int64, logger *zap.Logger, tb *metadata.TelemetryBuilder,
	deliver func(context.Context, *spoolRecord) Answer,
) (*spool, error) {
	s := &spool{
		client: client, deliver: deliver, maxBytes: maxBytes, logger: logger, telemetry: tb,
		wake: make(chan struct{}, 1), sleep: sleepCtx,
	}
	raw, err := client.Get(ctx, spoolMetaKey)
	if err != nil {
		return nil, fmt.Errorf("read the forward spool: %w", err)
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &s.meta); err != nil || s.meta.Head > s.meta.Tail {
			return nil, fmt.Errorf("the forward spool's index is unreadable (%q): clear the storage extension's data for this receiver", raw)
		}
	}
	if n := s.meta.Tail - s.meta.Head; n > 0 {
		tb.ReceiverSentryprofileForwardSpoolRequests.Add(ctx, int64(n))
		tb.ReceiverSentryprofileForwardSpoolBytes.Add(ctx, s.meta.Bytes)
		logger.Info("Forward spool resumes delivery", zap.Uint64("requests", n), zap.Int64("bytes", s.meta.Bytes))
	}
	return s, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// start runs the sender until stop.
func (s *spool) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.run(ctx)
}

// stop ends the sender once its request in flight has its answer (so that
// a request delivered is not delivered again after a restart), or when ctx
// ends, then closes the storage client.
func (s *spool) stop(ctx context.Context) error {
	if s.cancel != nil {
		s.cancel()
		select {
		case <-s.done:
		case <-ctx.Done():
			return errors.Join(ctx.Err(), s.client.Close(ctx))
		}
	}
	return s.client.Close(ctx)
}

// enqueue stores a request, dropping the oldest ones when it would not fit.
func (s *spool) enqueue(ctx context.Context, rec *spoolRecord) error {
	size := int64(len(rec.Body))
	if size > s.maxBytes {
		return fmt.Errorf("a %d-byte request exceeds forward::spool_max_bytes (%d)", size, s.maxBytes)
	}
	value, err := rec.encode()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.makeRoomLocked(ctx, size); err != nil {
		return err
	}
	if err := s.appendLocked(ctx, value, size); err != nil {
		return err
	}
	s.telemetry.ReceiverSentryprofileForwardSpoolRequests.Add(ctx, 1)
	s.telemetry.ReceiverSentryprofileForwardSpoolBytes.Add(ctx, size)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// makeRoomLocked drops the oldest requests until size more bytes fit.
// s.mu is held.
func (s *spool) makeRoomLocked(ctx context.Context, size int64) error {
	for s.meta.Bytes+size > s.maxBytes && s.meta.Head < s.meta.Tail {
		if err := s.dropOldest(ctx); err != nil {
			return err
		}
	}
	return nil
}

// appendLocked stores an encoded request of size body bytes at the tail,
// with its stamp and the new index, in one batch. s.mu is held.
func (s *spool) appendLocked(ctx context.Context, value []byte, size int64) error {
	seq := s.meta.Tail
	next := s.meta
	next.Tail++
	next.Bytes += size
	meta, _ := json.Marshal(next)
	stamp := strconv.FormatInt(size, 10) + " " + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := s.client.Batch(ctx,
		storage.SetOperation(spoolRecordKey(seq), value),
		storage.SetOperation(spoolSizeKey(seq), []byte(stamp)),
		storage.SetOperation(spoolMetaKey, meta),
	); err != nil {
		return fmt.Errorf("store the request in the forward spool: %w", err)
	}
	s.meta = next
	return nil
}

// dropOldest removes the head to make room; s.mu is held. The sender may
// be delivering that very request: its removal then finds it gone.
func (s *spool) dropOldest(ctx context.Context) error {
	if err := s.removeLocked(ctx, s.meta.Head); err != nil {
		return err
	}
	s.telemetry.ReceiverSentryprofileForwardSpoolDropped.Add(ctx, 1, metric.WithAttributeSet(spoolDroppedFull))
	s.logger.Warn("Forward spool full: the oldest request was dropped", zap.Int64("spool_max_bytes", s.maxBytes))
	return nil
}

var (
	spoolDroppedFull        = attribute.NewSet(attribute.String("spool_drop_reason", "full"))
	spoolDroppedRejected    = attribute.NewSet(attribute.String("spool_drop_reason", "rejected"))
	spoolDroppedRateLimited = attribute.NewSet(attribute.String("spool_drop_reason", "rate_limited"))
)

// removeLocked deletes request seq if it is still the head and advances
// the head, noting in lastAge how long it waited. s.mu is held.
func (s *spool) removeLocked(ctx context.Context, seq uint64) error {
	if seq != s.meta.Head || s.meta.Head >= s.meta.Tail {
		return nil // dropped meanwhile to make room
	}
	size, stored := s.stampLocked(ctx, seq)
	next := s.meta
	next.Head++
	next.Bytes -= size
	if next.Head == next.Tail || next.Bytes < 0 {
		next.Bytes = 0
	}
	meta, _ := json.Marshal(next)
	if err := s.client.Batch(ctx,
		storage.DeleteOperation(spoolRecordKey(seq)),
		storage.DeleteOperation(spoolSizeKey(seq)),
		storage.SetOperation(spoolMetaKey, meta),
	); err != nil {
		return fmt.Errorf("remove a request from the forward spool: %w", err)
	}
	s.telemetry.ReceiverSentryprofileForwardSpoolRequests.Add(ctx, -1)
	s.telemetry.ReceiverSentryprofileForwardSpoolBytes.Add(ctx, next.Bytes-s.meta.Bytes)
	s.meta = next
	if !stored.IsZero() {
		s.lastAge = time.Since(stored)
	}
	return nil
}

// stampLocked reads a request's size and storage time.
func (s *spool) stampLocked(ctx context.Context, seq uint64) (int64, time.Time) {
	raw, err := s.client.Get(ctx, spoolSizeKey(seq))
	if err != nil || raw == nil {
		return 0, time.Time{}
	}
	sizeText, atText, _ := strings.Cut(string(raw), " ")
	size, _ := strconv.ParseInt(sizeText, 10, 64)
	at, _ := strconv.ParseInt(atText, 10, 64)
	return size, time.Unix(0, at)
}

// next reads the head request, or reports that there is none.
func (s *spool) next(ctx context.Context) (uint64, *spoolRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.meta.Head < s.meta.Tail {
		seq := s.meta.Head
		raw, err := s.client.Get(ctx, spoolRecordKey(seq))
		if err != nil {
			return 0, nil, false, err
		}
		rec, derr := decodeSpoolRecord(raw)
		if raw != nil && derr == nil {
			return seq, rec, true, nil
		}
		// A record lost or torn (a crash mid-write): skip it rather than
		// block every request behind it.
		s.logger.Warn("Forward spool: an unreadable request was skipped", zap.Uint64("seq", seq))
		if err := s.removeLocked(ctx, seq); err != nil {
			return 0, nil, false, err
		}
	}
	return 0, nil, false, nil
}

// run delivers the stored requests in order until ctx ends.
func (s *spool) run(ctx context.Context) {
	defer close(s.done)
	b := backoff{next: spoolMinBackoff}
	for ctx.Err() == nil && s.deliverNext(ctx, &b) {
	}
}

// backoff is the wait before the next retry when the upstream names none:
// it doubles from spoolMinBackoff to spoolMaxBackoff while deliveries
// fail.
type backoff struct{ next time.Duration }

func (b *backoff) grow()  { b.next = min(2*b.next, spoolMaxBackoff) }
func (b *backoff) reset() { b.next = spoolMinBackoff }

// deliverNext delivers the head request, or waits for one; false when ctx
// ended.
func (s *spool) deliverNext(ctx context.Context, b *backoff) bool {
	seq, rec, ok, err := s.next(ctx)
	if err != nil {
		s.logger.Warn("Forward spool cannot be read", zap.Error(err))
		wait := b.next
		b.grow()
		return s.sleep(ctx, wait)
	}
	if !ok {
		return s.awaitRequest(ctx)
	}
	// Not cancelled by stop: a request on its way finishes (within the
	// client's timeout), so that it is not sent again after a restart.
	answer := s.deliver(context.WithoutCancel(ctx), rec)
	wait, verdict := spoolRetry(answer, b.next, time.Now())
	if verdict == spoolRetryLater {
		b.grow()
		return s.sleep(ctx, wait)
	}
	b.reset()
	s.reportDropped(ctx, verdict, answer, wait, rec)
	s.settle(ctx, seq)
	return true
}

// awaitRequest waits until a request is stored; false when ctx ended.
func (s *spool) awaitRequest(ctx context.Context) bool {
	select {
	case <-s.wake:
		return true
	case <-ctx.Done():
		return false
	}
}

// reportDropped counts and logs a request the upstream will never take.
func (s *spool) reportDropped(ctx context.Context, verdict spoolVerdict, answer Answer, wait time.Duration, rec *spoolRecord) {
	switch verdict {
	case spoolRejected:
		// Sentry refused it for good (a revoked key, an invalid body):
		// sending it again cannot help.
		s.telemetry.ReceiverSentryprofileForwardSpoolDropped.Add(ctx, 1, metric.WithAttributeSet(spoolDroppedRejected))
		s.logger.Warn("Forward spool: the upstream refused a stored request; dropped",
			zap.Int("status", answer.Status), zap.String("path_kind", pathKind(pathOf(rec.URI))))
	case spoolRateLimited:
		s.telemetry.ReceiverSentryprofileForwardSpoolDropped.Add(ctx, 1, metric.WithAttributeSet(spoolDroppedRateLimited))
		s.logger.Warn("Forward spool: the upstream rate limits a stored request for longer than the spool waits; dropped, as an SDK would",
			zap.Duration("wait", wait), zap.String("path_kind", pathKind(pathOf(rec.URI))))
	}
}

// settle removes a request that is delivered or dropped, and records how
// long it waited.
func (s *spool) settle(ctx context.Context, seq uint64) {
	s.mu.Lock()
	s.lastAge = 0
	err := s.removeLocked(context.WithoutCancel(ctx), seq)
	age := s.lastAge
	s.mu.Unlock()
	if err != nil {
		s.logger.Warn("Forward spool cannot be updated", zap.Error(err))
	}
	if age > 0 {
		s.telemetry.ReceiverSentryprofileForwardSpoolAge.Record(ctx, age.Seconds())
	}
}

func pathOf(uri string) string {
	p, _, _ := strings.Cut(uri, "?")
	return p
}

// spoolVerdict is what the sender does with a request after an answer.
type spoolVerdict int

const (
	spoolDelivered spoolVerdict = iota
	spoolRejected
	spoolRateLimited
	spoolRetryLater
)

// spoolMaxRateLimitWait is the longest rate limit the sender waits out for
// the request at the head: the spool delivers in order, so a request over
// a long quota (a category's monthly quota is hours or days) would hold
// back every other request, errors included. Longer, it is dropped, as an
// SDK drops what Sentry answers 429.
const spoolMaxRateLimitWait = spoolMaxBackoff

// spoolRetry decides what an answer means. No answer, a 5xx or 408 is
// retried after the upstream's wait (capped at spoolMaxBackoff) or the
// backoff; a 429 after its wait when that is at most
// spoolMaxRateLimitWait, else it is dropped; another 4xx, or a 3xx, is
// final. The upstream's wait is the longest of its Retry-After and
// X-Sentry-Rate-Limits entries (sentryhttp.LongestWait): the request is not
// parsed for its item categories, so the longest limit it may fall under is
// honoured.
func spoolRetry(a Answer, backoff time.Duration, now time.Time) (time.Duration, spoolVerdict) {
	switch {
	case a.Err != nil:
		return backoff, spoolRetryLater
	case a.Status == http.StatusTooManyRequests:
		return rateLimitedRetry(a.Header, backoff, now)
	case a.Status >= 500 || a.Status == http.StatusRequestTimeout:
		return unavailableRetry(a.Header, backoff, now), spoolRetryLater
	case a.Status >= 300:
		// A redirect is not followed (see New): the configured upstream
		// will not take the request where it is.
		return 0, spoolRejected
	}
	return 0, spoolDelivered
}

// rateLimitedRetry waits out a 429, unless it asks for longer than the
// spool holds its head.
func rateLimitedRetry(h http.Header, backoff time.Duration, now time.Time) (time.Duration, spoolVerdict) {
	d, ok := sentryhttp.LongestWait(h, now)
	switch {
	case !ok:
		return backoff, spoolRetryLater
	case d > spoolMaxRateLimitWait:
		return d, spoolRateLimited
	}
	return d, spoolRetryLater
}

// unavailableRetry is the wait after a 5xx or 408.
func unavailableRetry(h http.Header, backoff time.Duration, now time.Time) time.Duration {
	if d, ok := sentryhttp.LongestWait(h, now); ok {
		return min(d, spoolMaxBackoff)
	}
	return backoff
}

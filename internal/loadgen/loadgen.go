// Package loadgen posts Sentry envelopes at a receiver the way a fleet of
// SDKs would: concurrent workers, gzip'd real-SDK-sized profile chunks with
// distinct ids, and the receiver's answers honoured (a 429 makes the worker
// wait, as an SDK does). Every run is bounded by a duration and a request
// count, and reports what an operator asks of a load test: rate, latency
// quantiles, status codes, and how many samples the receiver accepted.
package loadgen

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

// Envelope is one request body and what it carries.
type Envelope struct {
	Body     []byte // the HTTP body, already encoded
	Encoding string // its Content-Encoding; empty for none
	Samples  int    // Sentry sample events in its profile items
	ChunkID  string // the chunk_id of its profile chunk, for exactly-once checks
}

// Source returns the envelope of the i-th request. It is called from every
// worker at once and must be safe for that.
type Source func(i int) Envelope

// Config bounds and shapes a run.
type Config struct {
	// URL is the envelope endpoint, with the query auth if the SDK being
	// imitated uses it: http://host:port/api/<project>/envelope/?sentry_key=…
	URL string
	// AuthHeader, when set, is sent as X-Sentry-Auth (python and go SDKs).
	AuthHeader string
	// Workers is the number of concurrent senders (at least 1).
	Workers int
	// Duration stops new requests (those in flight complete); MaxRequests
	// stops the run earlier. At least one must be set.
	Duration    time.Duration
	MaxRequests int
	// Source supplies the bodies; ChunkSource by default.
	Source Source
	// RetryAfterCap bounds how long a worker waits after a 429, whatever
	// Retry-After says; 0 means it does not wait. A load test wants the
	// back-pressure, not a 60 s pause.
	RetryAfterCap time.Duration
	// Client is the HTTP client; a client with a 30 s timeout by default.
	Client *http.Client
}

// Result is what a run measured.
type Result struct {
	Requests  int         // requests that got an HTTP answer
	Errors    int         // requests that got none (connection refused, reset, timeout)
	Status    map[int]int // answers by status code
	Samples   int         // sample events in envelopes answered 200
	ChunkIDs  []string    // chunk ids of envelopes answered 200, in no particular order
	Elapsed   time.Duration
	Latency   Histogram // time to the full response, answered requests only
	LastError error     // the last transport error, if any
}

// Rate is answered requests per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// String is a one-line summary for test logs and the command.
func (r Result) String() string {
	codes := make([]int, 0, len(r.Status))
	for c := range r.Status {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var status strings.Builder
	for i, c := range codes {
		if i > 0 {
			status.WriteByte(' ')
		}
		fmt.Fprintf(&status, "%d×%d", c, r.Status[c])
	}
	return fmt.Sprintf("%d requests in %s (%.1f/s), status [%s], %d transport errors, %d samples accepted, latency p50 %s p99 %s max %s",
		r.Requests, r.Elapsed.Round(time.Millisecond), r.Rate(), status.String(), r.Errors, r.Samples,
		r.Latency.Quantile(0.50).Round(10*time.Microsecond), r.Latency.Quantile(0.99).Round(10*time.Microsecond),
		r.Latency.Max().Round(10*time.Microsecond))
}

// Run sends envelopes until the duration elapses, MaxRequests have been
// sent, or ctx ends. At the end of the duration the requests in flight are
// waited for; when ctx ends they are abandoned.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	r := newRun(ctx, cfg)
	results := make([]workerResult, max(cfg.Workers, 1))
	var wg sync.WaitGroup
	for w := range results {
		results[w].status = make(map[int]int)
		wg.Go(func() { r.work(&results[w]) })
	}
	wg.Wait()
	return mergeResults(results, time.Since(r.start)), nil
}

func (cfg *Config) validate() error {
	if cfg.URL == "" {
		return errors.New("loadgen: URL is required")
	}
	if cfg.Duration <= 0 && cfg.MaxRequests <= 0 {
		return errors.New("loadgen: set Duration or MaxRequests, a run must end by itself")
	}
	return nil
}

// run is what every worker of one Run shares.
type run struct {
	ctx    context.Context
	cfg    Config
	client *http.Client
	source Source
	// next is the index of the next request, over all workers.
	next  atomic.Int64
	start time.Time
	// stopAt ends new requests (zero: no duration). Those in flight finish,
	// so every envelope the receiver accepted is counted; cancelling them
	// instead would leave requests the receiver took but the run never saw
	// answered.
	stopAt time.Time
}

func newRun(ctx context.Context, cfg Config) *run {
	r := &run{ctx: ctx, cfg: cfg, client: cfg.Client, source: cfg.Source, start: time.Now()}
	if r.source == nil {
		r.source = ChunkSource(benchdata.SmallChunkConfig(), 64)
	}
	if r.client == nil {
		r.client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Duration > 0 {
		r.stopAt = r.start.Add(cfg.Duration)
	}
	return r
}

func (r *run) running() bool {
	return r.ctx.Err() == nil && (r.stopAt.IsZero() || time.Now().Before(r.stopAt))
}

// work is one worker: it sends the next request until the run ends.
func (r *run) work(res *workerResult) {
	for r.running() {
		i := int(r.next.Add(1) - 1)
		if r.cfg.MaxRequests > 0 && i >= r.cfg.MaxRequests {
			return
		}
		if !r.send(res, r.source(i)) {
			return
		}
	}
}

// send posts env and counts its answer; false when the caller cut the run
// off.
func (r *run) send(res *workerResult, env Envelope) bool {
	status, retryAfter, err := post(r.ctx, r.client, r.cfg, env, &res.latency)
	if err != nil {
		if r.ctx.Err() != nil {
			return false // cut off by the caller, not by the receiver
		}
		res.errors++
		res.lastErr = err
		return true
	}
	res.requests++
	res.status[status]++
	switch status {
	case http.StatusOK:
		res.accepted(env)
	case http.StatusTooManyRequests:
		r.backOff(retryAfter)
	}
	return true
}

// backOff waits as an SDK does after a 429, within RetryAfterCap and the
// run's end.
func (r *run) backOff(retryAfter time.Duration) {
	wait := min(retryAfter, r.cfg.RetryAfterCap)
	if !r.stopAt.IsZero() {
		wait = min(wait, time.Until(r.stopAt))
	}
	if wait <= 0 {
		return
	}
	select {
	case <-r.ctx.Done():
	case <-time.After(wait):
	}
}

// mergeResults adds up the workers' counts.
func mergeResults(results []workerResult, elapsed time.Duration) Result {
	out := Result{Status: make(map[int]int), Elapsed: elapsed}
	for i := range results {
		out.add(&results[i])
	}
	return out
}

func (r *Result) add(w *workerResult) {
	r.Requests += w.requests
	r.Errors += w.errors
	r.Samples += w.samples
	r.ChunkIDs = append(r.ChunkIDs, w.chunkIDs...)
	for c, n := range w.status {
		r.Status[c] += n
	}
	r.Latency.Merge(&w.latency)
	if w.lastErr != nil {
		r.LastError = w.lastErr
	}
}

type workerResult struct {
	requests, errors, samples int
	status                    map[int]int
	chunkIDs                  []string
	latency                   Histogram
	lastErr                   error
}

// accepted counts an envelope answered 200.
func (res *workerResult) accepted(env Envelope) {
	res.samples += env.Samples
	if env.ChunkID != "" {
		res.chunkIDs = append(res.chunkIDs, env.ChunkID)
	}
}

// post sends one envelope and reads the whole answer, so that the latency is
// the time to the full response and the connection is reused.
func post(ctx context.Context, client *http.Client, cfg Config, env Envelope, latency *Histogram) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(env.Body))
	if err != nil {
		return 0, 0, fmt.Errorf("loadgen: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-sentry-envelope")
	if env.Encoding != "" {
		req.Header.Set("Content-Encoding", env.Encoding)
	}
	if cfg.AuthHeader != "" {
		req.Header.Set("X-Sentry-Auth", cfg.AuthHeader)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("loadgen: post: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("loadgen: reading the answer: %w", err)
	}
	latency.Record(time.Since(start))
	retryAfter, _ := sentryhttp.ParseRetryAfter(resp.Header.Get(sentryhttp.HeaderRetryAfter), time.Now())
	return resp.StatusCode, retryAfter, nil
}

// ChunkSource pre-generates variants gzip'd V2 chunk envelopes shaped by cfg
// (each with its own seed, so distinct chunk ids and stacks) and cycles
// through them. Generating up front keeps the generator's cost out of the
// measured latency.
func ChunkSource(cfg benchdata.ChunkConfig, variants int) Source {
	variants = max(variants, 1)
	pool := make([]Envelope, variants)
	for i := range pool {
		pool[i] = ChunkEnvelope(cfg, cfg.Seed+uint64(i))
	}
	return func(i int) Envelope { return pool[i%len(pool)] }
}

// UniqueChunkSource generates a fresh envelope per request (seed base+i), so
// every request carries a chunk id no other request has: what exactly-once
// delivery checks count.
func UniqueChunkSource(cfg benchdata.ChunkConfig, base uint64) Source {
	return func(i int) Envelope { return ChunkEnvelope(cfg, base+uint64(i)) }
}

// ChunkEnvelope is one gzip'd envelope holding the chunk benchdata writes for
// cfg with the given seed, with the item headers its SDK sends: `length`
// and `platform` as the python SDK does, `platform` alone for node and
// javascript.
func ChunkEnvelope(cfg benchdata.ChunkConfig, seed uint64) Envelope {
	cfg.Seed = seed
	payload := benchdata.ChunkV2(cfg)
	envelopeOf := benchdata.Envelope
	if p := platformOf(cfg); p == "node" || p == "javascript" {
		envelopeOf = benchdata.EnvelopeUnsized
	}
	raw := envelopeOf("profile_chunk", platformOf(cfg), payload)
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed) // a valid level never fails
	_, _ = zw.Write(raw)                             // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return Envelope{Body: b.Bytes(), Encoding: "gzip", Samples: cfg.Samples(), ChunkID: chunkIDOf(payload)}
}

func platformOf(cfg benchdata.ChunkConfig) string {
	if cfg.Platform == "" {
		return "python"
	}
	return cfg.Platform
}

// chunkIDOf finds "chunk_id" in a generated chunk; benchdata writes it first
// as 32 hex digits.
func chunkIDOf(payload []byte) string {
	const key = `"chunk_id":"`
	i := bytes.Index(payload, []byte(key))
	if i < 0 || len(payload) < i+len(key)+32 {
		return ""
	}
	return string(payload[i+len(key) : i+len(key)+32])
}

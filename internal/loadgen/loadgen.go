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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
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
	if cfg.URL == "" {
		return Result{}, errors.New("loadgen: URL is required")
	}
	if cfg.Duration <= 0 && cfg.MaxRequests <= 0 {
		return Result{}, errors.New("loadgen: set Duration or MaxRequests, a run must end by itself")
	}
	workers := max(cfg.Workers, 1)
	source := cfg.Source
	if source == nil {
		source = ChunkSource(benchdata.SmallChunkConfig(), 64)
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	var next atomic.Int64
	results := make([]workerResult, workers)
	start := time.Now()
	// The duration stops new requests; those in flight finish, so every
	// envelope the receiver accepted is counted. Cancelling them instead
	// would leave requests the receiver took but the run never saw answered.
	var stopAt time.Time
	if cfg.Duration > 0 {
		stopAt = start.Add(cfg.Duration)
	}
	running := func() bool {
		return ctx.Err() == nil && (stopAt.IsZero() || time.Now().Before(stopAt))
	}
	var wg sync.WaitGroup
	for w := range results {
		results[w].status = make(map[int]int)
		wg.Add(1)
		go func(res *workerResult) {
			defer wg.Done()
			for running() {
				i := int(next.Add(1) - 1)
				if cfg.MaxRequests > 0 && i >= cfg.MaxRequests {
					return
				}
				env := source(i)
				status, retryAfter, err := post(ctx, client, cfg, env, &res.latency)
				if err != nil {
					if ctx.Err() != nil {
						// Cut off by the caller, not by the receiver.
						return
					}
					res.errors++
					res.lastErr = err
					continue
				}
				res.requests++
				res.status[status]++
				switch status {
				case http.StatusOK:
					res.samples += env.Samples
					if env.ChunkID != "" {
						res.chunkIDs = append(res.chunkIDs, env.ChunkID)
					}
				case http.StatusTooManyRequests:
					wait := min(retryAfter, cfg.RetryAfterCap)
					if !stopAt.IsZero() {
						wait = min(wait, time.Until(stopAt))
					}
					if wait > 0 {
						select {
						case <-ctx.Done():
						case <-time.After(wait):
						}
					}
				}
			}
		}(&results[w])
	}
	wg.Wait()

	out := Result{Status: make(map[int]int), Elapsed: time.Since(start)}
	for i := range results {
		r := &results[i]
		out.Requests += r.requests
		out.Errors += r.errors
		out.Samples += r.samples
		out.ChunkIDs = append(out.ChunkIDs, r.chunkIDs...)
		for c, n := range r.status {
			out.Status[c] += n
		}
		out.Latency.Merge(&r.latency)
		if r.lastErr != nil {
			out.LastError = r.lastErr
		}
	}
	return out, nil
}

type workerResult struct {
	requests, errors, samples int
	status                    map[int]int
	chunkIDs                  []string
	latency                   Histogram
	lastErr                   error
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
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), nil
}

// retryAfter reads Retry-After in seconds; Sentry never sends the date form.
func retryAfter(v string) time.Duration {
	s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
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

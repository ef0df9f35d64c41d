// Command sentrygoe2e is a small Go service profiled by the real
// github.com/getsentry/sentry-go v0.30.0, the last release with a profiler
// (transaction profiles, V1). The e2e tests build it in this module of its
// own, so that the project's go.mod never depends on the SDK, and run it with
// SENTRY_DSN pointing at the collector.
//
// The work runs under a root transaction with a child span per round; each
// round spends its time in two named functions.
//
// With E2E_EVENTS=1 it also sends what else v0.30.0 can send: an error that
// wraps another (the SDK unwraps it into a chained exception), a message
// and a cron check-in. v0.30.0 has no Sentry logs (they came in v0.33.0),
// no release-health sessions, and its statsd metrics have no public API
// (only a hand-built event of its unexported "statsd" type sends them), so
// it sends none of those.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/getsentry/sentry-go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sentrygoe2e:", err)
		os.Exit(1)
	}
}

func run() error {
	dsn := os.Getenv("SENTRY_DSN")
	if dsn == "" {
		return fmt.Errorf("SENTRY_DSN is not set")
	}
	busy := 3 * time.Second
	if v := os.Getenv("E2E_BUSY_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("E2E_BUSY_MS=%q: %w", v, err)
		}
		busy = time.Duration(ms) * time.Millisecond
	}
	err := sentry.Init(sentry.ClientOptions{
		Dsn:                dsn,
		Release:            envOr("E2E_RELEASE", "e2e-go@1.0.0"),
		Environment:        envOr("E2E_ENVIRONMENT", "e2e"),
		EnableTracing:      true,
		TracesSampleRate:   1,
		ProfilesSampleRate: 1,
		Debug:              os.Getenv("E2E_SENTRY_DEBUG") == "1",
	})
	if err != nil {
		return fmt.Errorf("sentry.Init: %w", err)
	}

	result := runJob(context.Background(), busy)
	if os.Getenv("E2E_EVENTS") == "1" {
		sendEvents()
	}
	flushed := sentry.Flush(10 * time.Second)
	out, err := json.Marshal(map[string]any{"rounds": result.rounds, "checksum": result.checksum, "flushed": flushed})
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	if !flushed {
		return fmt.Errorf("sentry.Flush timed out")
	}
	return nil
}

// sendEvents sends one of each other item v0.30.0 sends: two events and a
// check_in.
func sendEvents() {
	cause := errors.New("e2e: the cause of the exception")
	sentry.CaptureException(fmt.Errorf("e2e: an exception captured on purpose: %w", cause))
	sentry.CaptureMessage("e2e: a message captured on purpose")
	sentry.CaptureCheckIn(&sentry.CheckIn{
		MonitorSlug: "e2e-job",
		Status:      sentry.CheckInStatusOK,
		Duration:    1500 * time.Millisecond,
	}, nil)
}

type jobResult struct {
	rounds   int
	checksum uint64
}

func runJob(ctx context.Context, busy time.Duration) jobResult {
	const rounds = 5
	perRound := busy / rounds
	tx := sentry.StartTransaction(ctx, "e2e-job", sentry.WithOpName("e2e.job"))
	defer tx.Finish()
	var checksum uint64
	for range rounds {
		step := tx.StartChild("e2e.step", sentry.WithDescription("e2e-step"))
		checksum ^= e2eOuterChecksum(perRound * 4 / 10)
		checksum ^= e2eInnerCompute(perRound * 6 / 10)
		step.Finish()
	}
	return jobResult{rounds: rounds, checksum: checksum}
}

// e2eBusyFibonacci is recursive so that the profiler sees it on most
// stacks; go:noinline keeps its frame even where the compiler could inline.
//
//go:noinline
func e2eBusyFibonacci(n int) uint64 {
	if n < 2 {
		return uint64(n)
	}
	return e2eBusyFibonacci(n-1) + e2eBusyFibonacci(n-2)
}

//go:noinline
func e2eOuterChecksum(d time.Duration) uint64 {
	deadline := time.Now().Add(d)
	var h uint64
	for time.Now().Before(deadline) {
		for i := range 2000 {
			h = h*31 + uint64(i*7919&0xffff)
		}
	}
	return h
}

//go:noinline
func e2eInnerCompute(d time.Duration) uint64 {
	deadline := time.Now().Add(d)
	var sum uint64
	for time.Now().Before(deadline) {
		sum = (sum + e2eBusyFibonacci(22)) % 1000003
	}
	return sum
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

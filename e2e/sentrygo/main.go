// Command sentrygoe2e is a small Go service profiled by the real
// github.com/getsentry/sentry-go v0.30.0, the last release with a profiler
// (transaction profiles, V1). The e2e tests build it in this module of its
// own, so that the project's go.mod never depends on the SDK, and run it with
// SENTRY_DSN pointing at the collector.
//
// The work runs under a root transaction with a child span per round; each
// round spends its time in two named functions.
package main

import (
	"context"
	"encoding/json"
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

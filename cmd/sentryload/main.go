// Command sentryload posts real-SDK-sized, gzip'd Sentry profile chunk
// envelopes at a receiver for a bounded time and prints rate, latency
// quantiles and status codes. It is the load generator of the reliability
// tests, usable by hand against a running collector:
//
//	sentryload -dsn http://<key>@localhost:8000/42 -workers 8 -duration 30s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/loadgen"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sentryload:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("sentryload", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "DSN of the receiver, e.g. http://<public_key>@localhost:8000/<project_id> (required)")
	workers := fs.Int("workers", 4, "concurrent senders")
	duration := fs.Duration("duration", 30*time.Second, "how long to send")
	maxRequests := fs.Int("max-requests", 1_000_000, "stop after this many requests")
	variants := fs.Int("variants", 64, "distinct chunks to cycle through")
	large := fs.Bool("large", false, "send busy 60 s chunks (about 5 MB) instead of real-SDK-sized ones (about 70 KB)")
	retryCap := fs.Duration("retry-after-cap", time.Second, "longest wait after a 429, whatever Retry-After says")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := parseDSNFlag(*dsn)
	if err != nil {
		return err
	}
	chunk := chunkConfig(*large)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := loadgen.Run(ctx, loadgen.Config{
		URL:           d.EnvelopeURL(),
		AuthHeader:    sentryhttp.AuthHeader(d.PublicKey, "sentryload/1"),
		Workers:       *workers,
		Duration:      *duration,
		MaxRequests:   *maxRequests,
		Source:        loadgen.ChunkSource(chunk, *variants),
		RetryAfterCap: *retryCap,
	})
	if err != nil {
		return err
	}
	fmt.Println(res)
	if res.LastError != nil {
		fmt.Println("last transport error:", res.LastError)
	}
	return nil
}

// parseDSNFlag reads the required -dsn.
func parseDSNFlag(dsn string) (sentryhttp.DSN, error) {
	if dsn == "" {
		return sentryhttp.DSN{}, errors.New("-dsn is required")
	}
	d, err := sentryhttp.ParseDSN(dsn)
	if err != nil {
		return sentryhttp.DSN{}, fmt.Errorf("-dsn: %w", err)
	}
	return d, nil
}

// chunkConfig is the chunk every request carries: real-SDK-sized, or busy
// 60 s ones with -large.
func chunkConfig(large bool) benchdata.ChunkConfig {
	if large {
		return benchdata.LargeChunkConfig()
	}
	return benchdata.SmallChunkConfig()
}

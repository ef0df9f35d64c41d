package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sentryprofile/otelcol-sentryprofile/symbolication"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor/internal/metadata"
)

// The `reason` values of processor_symbolication_frames_unresolved.
const (
	reasonNoArtifact = "no_artifact"
	reasonNoMatch    = "no_match"
	reasonLoadError  = "load_error"
	// reasonPending: the artifact was being scanned for, loaded or
	// fetched when the batch's wait ended; a later batch resolves it.
	reasonPending = "pending"
)

func kindAttrs(kind symbolication.Kind) attribute.Set {
	return attribute.NewSet(attribute.String("kind", string(kind)))
}

// outcomeCounts sums a batch's outcomes, recorded once at its end.
type outcomeCounts struct {
	hits       map[symbolication.Kind]int64
	resolved   map[symbolication.Kind]int64
	unresolved map[[2]string]int64 // kind, reason
}

func (c *outcomeCounts) add(kind symbolication.Kind, hit bool, err error) {
	if hit {
		if c.hits == nil {
			c.hits = map[symbolication.Kind]int64{}
		}
		c.hits[kind]++
	}
	if err == nil {
		if c.resolved == nil {
			c.resolved = map[symbolication.Kind]int64{}
		}
		c.resolved[kind]++
		return
	}
	if c.unresolved == nil {
		c.unresolved = map[[2]string]int64{}
	}
	c.unresolved[[2]string{string(kind), reasonOf(err)}]++
}

func (c *outcomeCounts) record(ctx context.Context, tb *metadata.TelemetryBuilder) {
	for kind, n := range c.hits {
		tb.ProcessorSymbolicationFrameCacheHits.Add(ctx, n, metric.WithAttributeSet(kindAttrs(kind)))
	}
	for kind, n := range c.resolved {
		tb.ProcessorSymbolicationFramesResolved.Add(ctx, n, metric.WithAttributeSet(kindAttrs(kind)))
	}
	for k, n := range c.unresolved {
		tb.ProcessorSymbolicationFramesUnresolved.Add(ctx, n, metric.WithAttributeSet(
			attribute.NewSet(attribute.String("kind", k[0]), attribute.String("reason", k[1]))))
		if k[1] == reasonLoadError {
			tb.ProcessorSymbolicationArtifactLoadErrors.Add(ctx, n, metric.WithAttributeSet(
				attribute.NewSet(attribute.String("kind", k[0]))))
		}
	}
}

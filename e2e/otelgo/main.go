// Command otelgo is a real OpenTelemetry Go SDK producer for the bridge's
// end-to-end test: it records an exception on a span, logs one with the
// exception.* attributes, and emits a counter, a gauge and a histogram,
// all over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, then flushes.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"runtime/debug"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// errNoStock is the error the program fails with.
var errNoStock = errors.New("item 42 out of stock")

func run(ctx context.Context) error {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("otelgo-shop"),
		semconv.ServiceVersion("otelgo-shop@1.2.3"),
		attribute.String("deployment.environment.name", "e2e"),
		semconv.HostName("otelgo-host"),
	))
	if err != nil {
		return err
	}
	te, err := otlptracehttp.New(ctx)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(te))
	le, err := otlploghttp.New(ctx)
	if err != nil {
		return err
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewSimpleProcessor(le)))
	me, err := otlpmetrichttp.New(ctx)
	if err != nil {
		return err
	}
	// Delta temporality, as Sentry counts; the exporter also takes
	// cumulative series (the test of the node producer sends those).
	reader := sdkmetric.NewPeriodicReader(me)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))

	tracer := tp.Tracer("github.com/shop/checkout")
	ctx, span := tracer.Start(ctx, "checkout")
	sc := span.SpanContext()
	reserve(ctx, span)

	logger := lp.Logger("github.com/shop/checkout")
	var rec otellog.Record
	rec.SetSeverity(otellog.SeverityError)
	rec.SetBody(attribute.StringValue("reservation failed"))
	// The SDK writes exception.type and exception.message from the
	// error; the stack is the program's to add.
	rec.SetErr(errNoStock)
	rec.AddAttributes(
		attribute.String("exception.stacktrace", string(debug.Stack())),
		attribute.String("order.id", "o-17"),
	)
	logger.Emit(ctx, rec)

	meter := mp.Meter("github.com/shop/checkout")
	orders, _ := meter.Int64Counter("shop.orders", metric.WithUnit("1"))
	orders.Add(ctx, 3, metric.WithAttributes(attribute.String("region", "eu-1")))
	depth, _ := meter.Int64Gauge("shop.queue.depth")
	depth.Record(ctx, 7)
	latency, _ := meter.Float64Histogram("shop.checkout.duration", metric.WithUnit("ms"))
	latency.Record(ctx, 187.5, metric.WithAttributes(attribute.String("region", "eu-1")))
	span.End()

	fmt.Printf("trace_id=%s span_id=%s\n", sc.TraceID(), sc.SpanID())
	return errors.Join(tp.Shutdown(ctx), lp.Shutdown(ctx), mp.Shutdown(ctx))
}

// reserve fails and records the failure on the span, with the stack.
func reserve(_ context.Context, span trace.Span) {
	span.RecordError(errNoStock, trace.WithStackTrace(true))
	span.SetStatus(2, errNoStock.Error())
}

func init() {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		log.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT is not set")
	}
}

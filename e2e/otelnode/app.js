// A real OpenTelemetry JS producer for the bridge's e2e test: it records an
// exception on a span, logs one with the exception.* attributes, and emits
// a counter, a gauge and a histogram over OTLP/HTTP to
// OTEL_EXPORTER_OTLP_ENDPOINT (cumulative temporality, the SDK's default),
// then flushes and prints the span's ids.
'use strict';

const api = require('@opentelemetry/api');
const { logs, SeverityNumber } = require('@opentelemetry/api-logs');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { LoggerProvider, SimpleLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http');

const resource = resourceFromAttributes({
  'service.name': 'otelnode-shop',
  'service.version': 'otelnode-shop@2.0.1',
  'deployment.environment.name': 'e2e',
  'host.name': 'otelnode-host',
});

const tracerProvider = new BasicTracerProvider({
  resource,
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
const loggerProvider = new LoggerProvider({
  resource,
  processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter() })],
});
const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: 60000 });
const meterProvider = new MeterProvider({ resource, readers: [reader] });

function chargeCard(amount) {
  if (amount > 100) {
    throw new RangeError(`amount ${amount} over the card limit`);
  }
}

function checkout(span) {
  try {
    chargeCard(250);
  } catch (err) {
    span.recordException(err);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: err.message });
    return err;
  }
  return null;
}

async function main() {
  const tracer = tracerProvider.getTracer('shop-checkout');
  const span = tracer.startSpan('POST /checkout');
  const err = checkout(span);

  const logger = loggerProvider.getLogger('shop-checkout');
  logger.emit({
    severityNumber: SeverityNumber.ERROR,
    severityText: 'ERROR',
    body: 'payment failed',
    context: api.trace.setSpan(api.context.active(), span),
    attributes: {
      'exception.type': err.name,
      'exception.message': err.message,
      'exception.stacktrace': err.stack,
      'order.id': 'o-99',
    },
  });

  const meter = meterProvider.getMeter('shop-checkout');
  meter.createCounter('shop.payments', { unit: '1' }).add(2, { method: 'card' });
  meter.createGauge('shop.cart.items').record(5);
  meter.createHistogram('shop.payment.duration', { unit: 'ms' }).record(42.5, { method: 'card' });
  span.end();

  const sc = span.spanContext();
  await reader.forceFlush();
  await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown(), meterProvider.shutdown()]);
  console.log(`trace_id=${sc.traceId} span_id=${sc.spanId}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

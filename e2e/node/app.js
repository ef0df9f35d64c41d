'use strict';

// A small program profiled by the real Sentry Node SDK 11 with continuous
// profiling in the 'trace' lifecycle: the profiler runs while a root span is
// open. The e2e tests run it with SENTRY_DSN pointing at the collector and
// look for its functions, threads, release and environment in the OTLP
// profiles that come out.
//
// The work is done under NESTED spans so that a test can tell which span was
// the innermost one at each sample:
//
//   e2e-job (root span)
//     e2e-step (one per round)   e2eOuterChecksum runs here
//       e2e-compute              e2eBusyFibonacci runs here
//
// Environment:
//   SENTRY_DSN            where to send (required)
//   E2E_RELEASE, E2E_ENVIRONMENT
//   E2E_BUSY_MS           total CPU time of the job (default 3000)
//   E2E_TRACE_LIFECYCLE   'static' sends transactions (transaction items);
//                         'stream' (the 11.x default) streams spans (span items)
//   E2E_EVENTS=1          also capture an exception and a message, write a
//                         log, count a metric, send a check-in and feedback
//                         and end a release-health session, for tests of
//                         what else the SDK sends
//   E2E_SENTRY_DEBUG=1    the SDK's own debug log

const Sentry = require('@sentry/node');
const { nodeProfilingIntegration } = require('@sentry/profiling-node');

const dsn = process.env.SENTRY_DSN;
if (!dsn) {
  console.error('app.js: SENTRY_DSN is not set');
  process.exit(2);
}
const busyMillis = Number(process.env.E2E_BUSY_MS || 3000);
const lifecycle = process.env.E2E_TRACE_LIFECYCLE || 'static';
if (lifecycle !== 'static' && lifecycle !== 'stream') {
  console.error(`app.js: E2E_TRACE_LIFECYCLE must be 'static' or 'stream', not ${lifecycle}`);
  process.exit(2);
}

Sentry.init({
  dsn,
  release: process.env.E2E_RELEASE || 'e2e-app@1.0.0',
  environment: process.env.E2E_ENVIRONMENT || 'e2e',
  integrations: [nodeProfilingIntegration()],
  tracesSampleRate: 1,
  // 'stream' is the SDK's default; leaving the option out tests exactly that.
  ...(lifecycle === 'static' ? { traceLifecycle: 'static' } : {}),
  // Continuous profiling of every session, started and stopped with the
  // root span, so one short run yields one complete chunk.
  profileSessionSampleRate: 1,
  profileLifecycle: 'trace',
  debug: process.env.E2E_SENTRY_DEBUG === '1',
});

// Recursive on purpose: V8 does not inline it away, so the profiler sees
// this name on most stacks of the inner span.
function e2eBusyFibonacci(n) {
  return n < 2 ? n : e2eBusyFibonacci(n - 1) + e2eBusyFibonacci(n - 2);
}

// String hashing: CPU work that only ever runs in the outer (step) span.
function e2eOuterChecksum(millis) {
  const deadline = Date.now() + millis;
  let h = 0;
  while (Date.now() < deadline) {
    for (let i = 0; i < 2000; i++) {
      h = (Math.imul(h, 31) + ((i * 7919) & 0xffff)) | 0;
    }
  }
  return h;
}

function e2eInnerCompute(millis) {
  const deadline = Date.now() + millis;
  let checksum = 0;
  while (Date.now() < deadline) {
    checksum = (checksum + e2eBusyFibonacci(22)) % 1000003;
  }
  return checksum;
}

function runJob() {
  const rounds = 5;
  const perRound = busyMillis / rounds;
  let checksum = 0;
  return Sentry.startSpan({ name: 'e2e-job', op: 'e2e.job', forceTransaction: true }, () => {
    for (let round = 0; round < rounds; round++) {
      Sentry.startSpan({ name: 'e2e-step', op: 'e2e.step', attributes: { 'e2e.round': round } }, () => {
        checksum ^= e2eOuterChecksum(perRound * 0.4);
        checksum ^= Sentry.startSpan({ name: 'e2e-compute', op: 'e2e.compute' }, () => e2eInnerCompute(perRound * 0.6));
      });
    }
    return { rounds, checksum };
  });
}

// What else an SDK sends, one of each: an error with a cause and a message
// (event items; linkedErrorsIntegration turns the cause into a chained
// exception), a log (log), a metric (trace_metric), a cron check-in
// (check_in), user feedback (feedback) and the release-health session
// (session). Logs and metrics are on by default in @sentry/node 11.
function sendEvents() {
  Sentry.startSession();
  const cause = new TypeError('e2e: the cause of the exception');
  Sentry.captureException(new Error('e2e: an exception captured on purpose', { cause }));
  Sentry.captureMessage('e2e: a message captured on purpose', 'warning');
  Sentry.logger.info('e2e: a log written on purpose', { 'e2e.kind': 'log' });
  Sentry.metrics.count('e2e.events', 1, { attributes: { 'e2e.kind': 'metric' } });
  Sentry.captureCheckIn({ monitorSlug: 'e2e-job', status: 'ok', duration: 1.5 });
  Sentry.captureFeedback({ message: 'e2e: feedback sent on purpose', name: 'e2e' });
  Sentry.endSession();
}

async function main() {
  const result = runJob();
  if (process.env.E2E_EVENTS === '1') {
    sendEvents();
  }
  const flushed = await Sentry.flush(10000);
  console.log(JSON.stringify({ lifecycle, ...result, flushed }));
  if (!flushed) {
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error('app.js:', err);
  process.exit(1);
});

'use strict';

// A small program profiled by the real Sentry Node SDK of the releases that
// still have transaction profiles: 10.75.3 (installed here), and the last
// 9.x and 8.x (installed in ../node9 and ../node8). The SDK is loaded from
// the working directory, so the e2e tests run this one file from each of
// those directories. They run it with SENTRY_DSN pointing at the collector in
// one of three modes (E2E_PROFILE_MODE):
//
//   transaction  profilesSampleRate: one V1 `profile` item sent in the same
//                envelope as the `transaction` it profiles;
//   continuous   profileSessionSampleRate with profileLifecycle 'trace': V2
//                `profile_chunk` items while the root span is open (9.x and
//                later);
//   manual       V2 `profile_chunk` items between Sentry.profiler.startProfiler()
//                and stopProfiler(): 8.x's only continuous mode (it profiles
//                continuously whenever profilesSampleRate is unset and ignores
//                the session options, which 9.x and later need for it).
//
// The work runs under one root span with a child span per round; each round
// spends its time in two named functions.
//
// With E2E_EVENTS=1 (10.x only: it uses logger, metrics and captureFeedback,
// which 8.x and 9.x lack) it also captures an exception with a cause and a
// message, writes a log, counts a metric, sends a check-in and feedback and
// ends a release-health session, for tests of what else the SDK sends.

const path = require('path');

// fromWorkingDirectory loads an npm package installed beside the directory
// the program runs in, not beside this file.
function fromWorkingDirectory(name) {
  return require(require.resolve(name, { paths: [process.cwd()] }));
}

const Sentry = fromWorkingDirectory('@sentry/node');
const { nodeProfilingIntegration } = fromWorkingDirectory('@sentry/profiling-node');
const sdkDirectory = path.basename(process.cwd());

const dsn = process.env.SENTRY_DSN;
if (!dsn) {
  console.error('app.js: SENTRY_DSN is not set');
  process.exit(2);
}
const busyMillis = Number(process.env.E2E_BUSY_MS || 3000);
const mode = process.env.E2E_PROFILE_MODE || 'transaction';
const profiling = {
  transaction: { profilesSampleRate: 1 },
  continuous: { profileSessionSampleRate: 1, profileLifecycle: 'trace' },
  manual: { profileSessionSampleRate: 1, profileLifecycle: 'manual' },
}[mode];
if (!profiling) {
  console.error(`app.js: E2E_PROFILE_MODE must be 'transaction', 'continuous' or 'manual', not ${mode}`);
  process.exit(2);
}

Sentry.init({
  dsn,
  release: process.env.E2E_RELEASE || 'e2e-app@1.0.0',
  environment: process.env.E2E_ENVIRONMENT || 'e2e',
  integrations: [nodeProfilingIntegration()],
  tracesSampleRate: 1,
  ...profiling,
  debug: process.env.E2E_SENTRY_DEBUG === '1',
});

// Recursive on purpose: V8 does not inline it away.
function e2eBusyFibonacci(n) {
  return n < 2 ? n : e2eBusyFibonacci(n - 1) + e2eBusyFibonacci(n - 2);
}

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
  return Sentry.startSpan({ name: 'e2e-job', op: 'e2e.job' }, () => {
    for (let round = 0; round < rounds; round++) {
      Sentry.startSpan({ name: 'e2e-step', op: 'e2e.step' }, () => {
        checksum ^= e2eOuterChecksum(perRound * 0.4);
        checksum ^= e2eInnerCompute(perRound * 0.6);
      });
    }
    return { rounds, checksum };
  });
}

// What else the SDK sends, one of each: an error with a cause and a message
// (event items; linkedErrorsIntegration turns the cause into a chained
// exception), a log (log), a metric (trace_metric), a cron check-in
// (check_in), user feedback (feedback) and the release-health session
// (session). Logs and metrics are on by default in 10.x.
function sendEvents() {
  Sentry.startSession();
  const cause = new TypeError('e2e: the cause of the exception');
  Sentry.captureException(new Error('e2e: an exception captured on purpose', { cause }));
  Sentry.captureMessage('e2e: a message captured on purpose', 'warning');
  Sentry.logger.info('e2e: a log written on purpose', { 'e2e.kind': 'log' });
  Sentry.metrics.count('e2e.events', 1, { attributes: { 'e2e.kind': 'metric' } });
  Sentry.metrics.distribution('e2e.latency', 12.5, { unit: 'millisecond' });
  Sentry.captureCheckIn({ monitorSlug: 'e2e-job', status: 'ok', duration: 1.5 });
  Sentry.captureFeedback({ message: 'e2e: feedback sent on purpose', name: 'e2e' });
  Sentry.endSession();
}

async function main() {
  if (mode === 'manual') {
    Sentry.profiler.startProfiler();
  }
  const result = runJob();
  if (process.env.E2E_EVENTS === '1') {
    sendEvents();
  }
  let flushed = await Sentry.flush(10000);
  if (mode === 'manual') {
    // Stopped only once the transaction is out: 8.x names the profiler in
    // an event only while it runs, as in a service that profiles all along.
    Sentry.profiler.stopProfiler();
    flushed = (await Sentry.flush(10000)) && flushed;
  }
  console.log(JSON.stringify({ sdk: Sentry.SDK_VERSION, from: sdkDirectory, mode, ...result, flushed }));
  if (!flushed) {
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error('app.js:', err);
  process.exit(1);
});

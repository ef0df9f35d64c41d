'use strict';

// A small program profiled by the real Sentry Node SDK with continuous
// profiling. The e2e tests run it with SENTRY_DSN pointing at the collector
// and then look for e2eBusyFibonacci, the release and the environment in the
// OTLP profiles that come out.

const Sentry = require('@sentry/node');
const { nodeProfilingIntegration } = require('@sentry/profiling-node');

const dsn = process.env.SENTRY_DSN;
if (!dsn) {
  console.error('app.js: SENTRY_DSN is not set');
  process.exit(2);
}
const busyMillis = Number(process.env.E2E_BUSY_MS || 3000);

Sentry.init({
  dsn,
  release: process.env.E2E_RELEASE || 'e2e-app@1.0.0',
  environment: process.env.E2E_ENVIRONMENT || 'e2e',
  integrations: [nodeProfilingIntegration()],
  // Continuous profiling under the program's own control: every session is
  // profiled, and the chunk is closed by stopProfiler() rather than by a
  // timer, so one short run yields a complete chunk.
  profileSessionSampleRate: 1,
  profileLifecycle: 'manual',
  debug: process.env.E2E_SENTRY_DEBUG === '1',
});

// Recursive on purpose: V8 does not inline it away, so the profiler sees
// this name on most stacks.
function e2eBusyFibonacci(n) {
  return n < 2 ? n : e2eBusyFibonacci(n - 1) + e2eBusyFibonacci(n - 2);
}

function keepBusy(millis) {
  const deadline = Date.now() + millis;
  let rounds = 0;
  let checksum = 0;
  while (Date.now() < deadline) {
    checksum = (checksum + e2eBusyFibonacci(24)) % 1000003;
    rounds++;
  }
  return { rounds, checksum };
}

async function main() {
  Sentry.profiler.startProfiler();
  const result = keepBusy(busyMillis);
  Sentry.profiler.stopProfiler();
  const flushed = await Sentry.flush(10000);
  console.log(JSON.stringify({ ...result, flushed }));
  if (!flushed) {
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error('app.js:', err);
  process.exit(1);
});

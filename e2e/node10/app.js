'use strict';

// A small program profiled by the real Sentry Node SDK 10.75.3, the last
// release with transaction profiles. The e2e tests run it with SENTRY_DSN
// pointing at the collector in one of two modes (E2E_PROFILE_MODE):
//
//   transaction  profilesSampleRate: one V1 `profile` item sent in the same
//                envelope as the `transaction` it profiles;
//   continuous   profileSessionSampleRate with profileLifecycle 'trace': V2
//                `profile_chunk` items while the root span is open.
//
// The work runs under one root span with a child span per round; each round
// spends its time in two named functions.

const Sentry = require('@sentry/node');
const { nodeProfilingIntegration } = require('@sentry/profiling-node');

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
}[mode];
if (!profiling) {
  console.error(`app.js: E2E_PROFILE_MODE must be 'transaction' or 'continuous', not ${mode}`);
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

async function main() {
  const result = runJob();
  const flushed = await Sentry.flush(10000);
  console.log(JSON.stringify({ mode, ...result, flushed }));
  if (!flushed) {
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error('app.js:', err);
  process.exit(1);
});

'use strict';

// One SDK process of the scaling measurement: the real @sentry/node 11 with
// continuous profiling ('trace' lifecycle) runs a few jobs, each a root span
// with nested child spans keeping the CPU busy, so that it sends profile
// chunks in some envelopes and the spans that link their samples in others
// (transactions, or streamed span items). The packages are e2e/node's
// (NODE_PATH points at its node_modules), pinned by its lockfile.
//
// Environment:
//   SENTRY_DSN            where to send: the load balancer (required)
//   SCALE_LIFECYCLE       'static' (transaction items) or 'stream' (span items)
//   SCALE_JOBS            root spans, one after the other (default 4)
//   SCALE_BUSY_MS         CPU time of each job (default 800)
//   SCALE_SOURCE_ADDRESS  local address every request leaves from (e.g.
//                         127.0.0.12), as if each process ran on its own host
//   SCALE_AFFINITY        value of the X-Collector-Affinity header on every
//                         request: what a header-hashing balancer keys on

const http = require('node:http');
const Sentry = require('@sentry/node');
const { nodeProfilingIntegration } = require('@sentry/profiling-node');

const dsn = process.env.SENTRY_DSN;
if (!dsn) {
  console.error('client.js: SENTRY_DSN is not set');
  process.exit(2);
}
const lifecycle = process.env.SCALE_LIFECYCLE || 'static';
const jobs = Number(process.env.SCALE_JOBS || 4);
const busyMillis = Number(process.env.SCALE_BUSY_MS || 800);
const sourceAddress = process.env.SCALE_SOURCE_ADDRESS;

// The SDK's transport takes an http module and headers: the one place an
// application controls how its SDK's requests look to a load balancer.
const transportOptions = {
  headers: process.env.SCALE_AFFINITY ? { 'X-Collector-Affinity': process.env.SCALE_AFFINITY } : {},
};
if (sourceAddress) {
  transportOptions.httpModule = {
    request: (options, callback) => http.request({ ...options, localAddress: sourceAddress }, callback),
  };
}

Sentry.init({
  dsn,
  release: 'scale-app@1.0.0',
  environment: 'scale',
  integrations: [nodeProfilingIntegration()],
  tracesSampleRate: 1,
  ...(lifecycle === 'static' ? { traceLifecycle: 'static' } : {}),
  profileSessionSampleRate: 1,
  profileLifecycle: 'trace',
  transportOptions,
});

function scaleFibonacci(n) {
  return n < 2 ? n : scaleFibonacci(n - 1) + scaleFibonacci(n - 2);
}

function busy(millis) {
  const deadline = Date.now() + millis;
  let checksum = 0;
  while (Date.now() < deadline) {
    checksum = (checksum + scaleFibonacci(20)) % 1000003;
  }
  return checksum;
}

function runJob(job) {
  return Sentry.startSpan({ name: `scale-job-${job}`, op: 'scale.job', forceTransaction: true }, () => {
    let checksum = 0;
    for (let step = 0; step < 4; step++) {
      Sentry.startSpan({ name: 'scale-step', op: 'scale.step' }, () => {
        checksum ^= busy(busyMillis * 0.1);
        checksum ^= Sentry.startSpan({ name: 'scale-compute', op: 'scale.compute' }, () => busy(busyMillis * 0.15));
      });
    }
    return checksum;
  });
}

async function main() {
  let checksum = 0;
  for (let job = 0; job < jobs; job++) {
    checksum ^= runJob(job);
    // Idle between jobs: the profiler stops with the root span, so each
    // job is its own chunk, sent while the next job runs.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const flushed = await Sentry.flush(15000);
  console.log(JSON.stringify({ lifecycle, jobs, checksum, flushed }));
  if (!flushed) {
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error('client.js:', err);
  process.exit(1);
});

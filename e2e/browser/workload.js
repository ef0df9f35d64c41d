// The page's CPU work, shared by both SDK versions. It runs under NESTED
// spans so that a test can tell which span was the innermost one at each
// sample:
//
//   e2e-job (root span)
//     e2e-step (one per round)   e2eOuterChecksum runs here
//       e2e-compute              e2eBusyFibonacci runs here
//
// The page learns where to send and what to report from its query string,
// and reports back to the page server at /done when the SDK has flushed.

// Recursive on purpose: V8 does not inline it away, so the profiler sees
// this name on most stacks of the inner span.
export function e2eBusyFibonacci(n) {
  return n < 2 ? n : e2eBusyFibonacci(n - 1) + e2eBusyFibonacci(n - 2);
}

// String hashing: CPU work that only ever runs in the outer (step) span.
export function e2eOuterChecksum(millis) {
  const deadline = performance.now() + millis;
  let h = 0;
  while (performance.now() < deadline) {
    for (let i = 0; i < 2000; i++) {
      h = (Math.imul(h, 31) + ((i * 7919) & 0xffff)) | 0;
    }
  }
  return h;
}

export function e2eInnerCompute(millis) {
  const deadline = performance.now() + millis;
  let checksum = 0;
  while (performance.now() < deadline) {
    checksum = (checksum + e2eBusyFibonacci(22)) % 1000003;
  }
  return checksum;
}

export function settings() {
  const q = new URLSearchParams(window.location.search);
  return {
    dsn: q.get('dsn'),
    release: q.get('release') || 'e2e-page@1.0.0',
    environment: q.get('environment') || 'e2e',
    busyMillis: Number(q.get('busy') || 3000),
    events: q.get('E2E_EVENTS') === '1',
  };
}

// runJob does the work under the spans drawn above.
export function runJob(Sentry, busyMillis) {
  const rounds = 5;
  const perRound = busyMillis / rounds;
  let checksum = 0;
  Sentry.startSpan({ name: 'e2e-job', op: 'e2e.job' }, () => {
    for (let round = 0; round < rounds; round++) {
      Sentry.startSpan({ name: 'e2e-step', op: 'e2e.step' }, () => {
        checksum ^= e2eOuterChecksum(perRound * 0.4);
        checksum ^= Sentry.startSpan({ name: 'e2e-compute', op: 'e2e.compute' }, () => e2eInnerCompute(perRound * 0.6));
      });
    }
  });
  return { rounds, checksum };
}

// finish lets the profiler hand its profile to the SDK (stopping a JS
// Self-Profiling Profiler is asynchronous), flushes, and tells the page
// server how it went.
export async function finish(Sentry, result) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const flushed = await Sentry.flush(10000);
  await fetch('/done', { method: 'POST', body: JSON.stringify({ ...result, flushed }) });
}

export async function report(err) {
  await fetch('/done', { method: 'POST', body: JSON.stringify({ error: String(err && err.stack ? err.stack : err) }) });
}

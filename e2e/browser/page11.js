// @sentry/browser 11.x: UI profiling (V2). In the 'trace' lifecycle the
// profiler runs while a sampled root span is open, and its chunk is sent as a
// standalone profile_chunk envelope when the last root span ends.
//
// With E2E_EVENTS=1 in the query string the page also sends what else the
// browser SDK sends: an error with a cause and a message (event items), a log
// (log), metrics (trace_metric) and user feedback (feedback); the session
// (session) browserSessionIntegration starts at init and updates when the
// error is captured. Logs and metrics are on by default in 11.x; check-ins
// are a server-side API the browser SDK does not export.
import * as Sentry from 'sentry-browser-11';
import { finish, report, runJob, settings } from './workload.js';

function sendEvents() {
  const cause = new TypeError('e2e: the cause of the exception');
  Sentry.captureException(new Error('e2e: an exception captured on purpose', { cause }));
  Sentry.captureMessage('e2e: a message captured on purpose', 'warning');
  Sentry.logger.info('e2e: a log written on purpose', { 'e2e.kind': 'log' });
  Sentry.metrics.count('e2e.events', 1, { attributes: { 'e2e.kind': 'metric' } });
  Sentry.metrics.gauge('e2e.queue', 3);
  Sentry.metrics.distribution('e2e.latency', 12.5, { unit: 'millisecond' });
  Sentry.captureFeedback({ message: 'e2e: feedback sent on purpose', name: 'e2e' });
}

async function main() {
  const s = settings();
  Sentry.init({
    dsn: s.dsn,
    release: s.release,
    environment: s.environment,
    integrations: [Sentry.browserProfilingIntegration()],
    tracesSampleRate: 1,
    profileSessionSampleRate: 1,
    profileLifecycle: 'trace',
  });
  const result = runJob(Sentry, s.busyMillis);
  if (s.events) {
    sendEvents();
  }
  await finish(Sentry, result);
}

main().catch(report);

// @sentry/browser 11.x: UI profiling (V2). In the 'trace' lifecycle the
// profiler runs while a sampled root span is open, and its chunk is sent as a
// standalone profile_chunk envelope when the last root span ends.
import * as Sentry from 'sentry-browser-11';
import { finish, report, runJob, settings } from './workload.js';

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
  await finish(Sentry, result);
}

main().catch(report);

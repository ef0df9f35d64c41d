// @sentry/browser 10.x: transaction profiles (V1). The profile of the root
// span is sent in the envelope of its transaction.
import * as Sentry from 'sentry-browser-10';
import { finish, report, runJob, settings } from './workload.js';

async function main() {
  const s = settings();
  Sentry.init({
    dsn: s.dsn,
    release: s.release,
    environment: s.environment,
    integrations: [Sentry.browserProfilingIntegration()],
    tracesSampleRate: 1,
    profilesSampleRate: 1,
  });
  const result = runJob(Sentry, s.busyMillis);
  await finish(Sentry, result);
}

main().catch(report);

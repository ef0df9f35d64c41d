// The app: each error is captured as a Node service's would be.
import * as Sentry from '@sentry/node';
import fs from 'node:fs';
import { loadOrder, renderItems } from './orders.js';
import { Cart, checkout } from './cart.js';

Sentry.init({
  dsn: process.env.SENTRY_DSN,
  release: 'shop@' + process.env.BUILD,
  environment: 'test',
  attachStacktrace: true,
  tracesSampleRate: 0,
  beforeSend(event) {
    // What the SDK sends, for expect.mjs: the frames as minified.
    fs.appendFileSync(process.env.EVENTS_OUT, JSON.stringify(event) + '\n');
    return event;
  },
});

function run() {
  try {
    loadOrder(4711);
  } catch (err) {
    Sentry.captureException(err);
  }
  try {
    new Cart([]).total();
  } catch (err) {
    Sentry.captureException(err);
  }
  try {
    renderItems([{ sku: 'tea', qty: 1 }, { sku: 'cup', qty: -1 }]);
  } catch (err) {
    Sentry.captureException(err);
  }
  Sentry.captureMessage('order 4711 shipped');
  checkout(new Cart([{ price: 3, qty: 1 }]));
}

run();
setTimeout(() => {
  Sentry.flush(5000).then(() => process.exit(0));
}, 300);

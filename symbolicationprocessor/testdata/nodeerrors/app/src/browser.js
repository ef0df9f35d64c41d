// The page: the same errors as the Node app, captured by @sentry/browser.
import * as Sentry from '@sentry/browser';
import { loadOrder, renderItems } from './orders.js';
import { Cart, checkout } from './cart.js';

Sentry.init({
  dsn: window.PAGE.dsn,
  release: 'shop@browser',
  attachStacktrace: true,
  beforeSend(event) {
    // What the SDK sends, for expect.mjs: the frames as minified.
    navigator.sendBeacon('/event', JSON.stringify(event));
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
  Sentry.flush(5000).then((flushed) => fetch('/done', { method: 'POST', body: String(flushed) }));
}, 500);

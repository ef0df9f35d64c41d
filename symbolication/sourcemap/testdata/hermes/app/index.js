// The app's entry, as React Native's index.js: it starts the app, which
// does some work (what the sampling profiler sees) and then fails in a
// checkout (what the error handler sees).
const { Cart } = require(1);

function mix(hash, value) {
  return (hash * 31 + value) % 1000003;
}

function busyChecksum(rounds) {
  let hash = 0;
  for (let i = 0; i < rounds; i++) {
    hash = mix(hash, i);
  }
  return hash;
}

function checkout(items) {
  const cart = new Cart(items);
  return cart.total();
}

function runApp() {
  print('checksum ' + busyChecksum(5000000));
  try {
    checkout([
      { sku: 'tea', price: 4, qty: 2 },
      { sku: 'cup', price: -1, qty: 1 },
    ]);
  } catch (e) {
    // React Native's global error handler hands e.stack to the SDK.
    print(e.stack);
  }
}

runApp();

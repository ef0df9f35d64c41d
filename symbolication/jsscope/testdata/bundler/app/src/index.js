import { record, probes } from './probe.js';
import { ShoppingCart } from './cart.js';
import { registry, invoice, shout } from './format.js';

async function loadInventory(names) {
  record('probe:loadInventory');
  await Promise.resolve();
  return names.filter(function (name) {
    record('probe:<anonymous>');
    return name.length > 2;
  });
}

function validateOwner(owner) {
  record('probe:validateOwner');
  if (!/^[a-z]+$/i.test(owner)) {
    throw new Error(`bad owner ${owner}`);
  }
  return owner;
}

export async function main() {
  record('probe:main');
  const names = await loadInventory(['tea', 'coffee', 'ox']);
  const cart = ShoppingCart.fromNames(validateOwner('ada'), names);
  cart.addItem('cake', 450);
  setTimeout(() => {
    record('probe:<anonymous>');
  }, 0);
  await cart.checkout(async (amount) => {
    record('probe:<anonymous>');
    return amount;
  });
  return [registry.describe(cart), registry.summarize(cart), invoice(cart), shout(cart.owner), probes.length];
}

main().then((result) => console.log(JSON.stringify(result)));

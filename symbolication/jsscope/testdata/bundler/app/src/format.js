import { record } from './probe.js';

// Arrow functions assigned to variables.
export const formatPrice = (cents) => {
  record('probe:formatPrice');
  return (cents / 100).toFixed(2) + ' EUR';
};

export const shout = (text) => {
  record('probe:shout');
  return text.toUpperCase() + '!';
};

// Object literal members: a method and a property holding a function.
export const registry = {
  describe(cart) {
    record('probe:registry.describe');
    return cart.owner + ': ' + cart.items.length;
  },
  summarize: function (cart) {
    record('probe:registry.summarize');
    return formatPrice(cart.totalPrice);
  },
};

// Called once with a constant: a minifier may inline it into its caller.
function withTax(amount) {
  record('probe:withTax');
  return amount * 1.2;
}

export function invoice(cart) {
  record('probe:invoice');
  return formatPrice(withTax(cart.totalPrice));
}

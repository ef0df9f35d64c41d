import { record } from './probe.js';

// A class with methods, a getter, a static method and an async method:
// property names survive minification (kept names), the class name does not.
export class ShoppingCart {
  constructor(owner) {
    record('probe:new ShoppingCart');
    this.owner = owner;
    this.items = [];
  }

  addItem(name, price) {
    record('probe:ShoppingCart.addItem');
    this.items.push({ name, price });
    return this;
  }

  get totalPrice() {
    record('probe:get ShoppingCart.totalPrice');
    let sum = 0;
    this.items.forEach(function (item) {
      record('probe:<anonymous>');
      sum += item.price;
    });
    return sum;
  }

  static fromNames(owner, names) {
    record('probe:ShoppingCart.fromNames');
    const cart = new ShoppingCart(owner);
    names.forEach((n) => {
      record('probe:<anonymous>');
      cart.addItem(n, n.length);
    });
    return cart;
  }

  async checkout(pay) {
    record('probe:ShoppingCart.checkout');
    const paid = await pay(this.totalPrice);
    return paid === this.totalPrice;
  }
}

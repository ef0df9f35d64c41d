const { priceOf, discountFor } = require(2);

class Cart {
  constructor(items) {
    this.items = items;
  }

  total() {
    const subtotal = this.items
      .map(function (item) {
        return priceOf(item);
      })
      .reduce((sum, price) => sum + price, 0);
    return subtotal - discountFor(subtotal);
  }
}

exports.Cart = Cart;

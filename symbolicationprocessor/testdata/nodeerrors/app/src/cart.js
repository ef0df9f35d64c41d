// Cart: a class method that throws, and an async function whose error
// nobody catches.
export class Cart {
  constructor(lines) {
    this.lines = lines;
  }

  total() {
    let sum = 0;
    for (const line of this.lines) {
      sum += line.price * line.qty;
    }
    if (sum <= 0) {
      throw new Error('empty cart');
    }
    return sum;
  }
}

export async function checkout(cart) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  if (cart.lines.length > 0) {
    throw new Error('payment declined');
  }
}

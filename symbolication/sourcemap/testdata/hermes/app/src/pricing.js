function priceOf(item) {
  if (item.price < 0) {
    throw new RangeError('negative price for ' + item.sku);
  }
  return item.price * item.qty;
}

const discountFor = (total) => (total > 100 ? total * 0.1 : 0);

exports.priceOf = priceOf;
exports.discountFor = discountFor;

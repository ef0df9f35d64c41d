// Orders: a named function that throws, and one that wraps its error as a
// cause.
function fetchRow(id) {
  if (id > 4000) {
    throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  }
  return { id };
}

export function loadOrder(id) {
  try {
    return fetchRow(id);
  } catch (err) {
    throw new TypeError('could not load order ' + id, { cause: err });
  }
}

export const renderItems = (items) => {
  return items.map(function (item) {
    if (item.qty < 0) {
      throw new RangeError('negative quantity for ' + item.sku);
    }
    return item.sku + ' x' + item.qty;
  });
};

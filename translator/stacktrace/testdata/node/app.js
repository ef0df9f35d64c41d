'use strict';
// Prints error.stack the way the OpenTelemetry JS SDK records it in
// exception.stacktrace, for several shapes of stack, then util.inspect of an
// error with a cause (what a logger prints). Cases are separated by
// "=====name=====" lines. Lines marked "frame:" are the lines the parser test
// expects on the stack.
const util = require('util');

class Repository {
  constructor(rows) {
    if (!Array.isArray(rows)) {
      throw new TypeError('rows must be an array'); // frame:constructor
    }
    this.rows = rows;
  }

  find(id) {
    return this.rows.map((row) => row.id.toUpperCase()).indexOf(id); // frame:find
  }
}

function lookup(repo, id) {
  try {
    return repo.find(id); // frame:lookup
  } catch (err) {
    throw new Error('lookup failed for ' + id, { cause: err }); // frame:lookup-throw
  }
}

const service = {
  get: function get(id) {
    return lookup(new Repository([{ id: 'a' }, { id: 7 }]), id); // frame:get
  },
};
service.fetch = function load(id) {
  return new Repository(id); // frame:load
};

async function fetchRow(id) {
  await null;
  return service.fetch(id); // frame:fetchRow
}

async function handler(id) {
  const row = await fetchRow(id); // frame:handler
  return row;
}

function evaluate() {
  return eval('service.fetch(1)'); // frame:evaluate
}

async function main() {
  try {
    await handler(5); // frame:main-await
  } catch (err) {
    process.stdout.write('=====async=====\n' + err.stack + '\n');
  }
  try {
    service.get('A'); // frame:main-get
  } catch (err) {
    process.stdout.write('=====cause-stack=====\n' + err.stack + '\n');
    process.stdout.write('=====cause-inspect=====\n' + util.inspect(err) + '\n');
  }
  try {
    evaluate(); // frame:main-eval
  } catch (err) {
    process.stdout.write('=====eval=====\n' + err.stack + '\n');
  }
}

main();

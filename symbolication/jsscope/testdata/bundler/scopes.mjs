// Lists the scopes acorn finds in a JavaScript file, for the scanner's
// test against a real parser:
//
//   node scopes.mjs <file.js> <out.json>
//
// A scope is every function, arrow, method, getter, setter and class, as
// jsscope counts them: a method (and an accessor) from its first modifier
// or its key, a class from `class`; a class constructor is no scope of
// its own (its class's is). Positions are 0-based lines and UTF-16
// columns, the end just past the scope's last character.
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';
import fs from 'node:fs';

const [file, out] = process.argv.slice(2);
const code = fs.readFileSync(file, 'utf8');
let ast;
try {
  ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'module', allowHashBang: true });
} catch {
  ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true });
}

const lineStarts = [0];
for (const m of code.matchAll(/\r\n?|\n|\u2028|\u2029/g)) lineStarts.push(m.index + m[0].length);
function position(offset) {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return [lo, offset - lineStarts[lo]];
}

const scopes = [];
walk.fullAncestor(ast, (node, _state, ancestors) => {
  const parent = ancestors[ancestors.length - 2];
  if (/^Class(Declaration|Expression)$/.test(node.type)) {
    scopes.push([...position(node.start), ...position(node.end)]);
    return;
  }
  if (!/Function/.test(node.type)) return;
  if (parent && parent.type === 'MethodDefinition') {
    if (parent.kind === 'constructor') return;
    scopes.push([...position(parent.start), ...position(node.end)]);
    return;
  }
  if (parent && parent.type === 'Property' && (parent.method || parent.kind !== 'init')) {
    scopes.push([...position(parent.start), ...position(node.end)]);
    return;
  }
  scopes.push([...position(node.start), ...position(node.end)]);
});
fs.writeFileSync(out, JSON.stringify(scopes));

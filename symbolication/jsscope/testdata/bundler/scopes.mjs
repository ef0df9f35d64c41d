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

// The name of a scope, as Sentry's scope naming (getsentry/js-source-scopes)
// builds it from a syntax tree, written here over acorn's tree on its own:
// the parts a walk up the ancestors finds (an object's key, a class's
// name, a variable or an assignment target ends the walk, a function
// stops it). Names are the source's text, before any source map. One
// deliberate difference, as in jsscope: a member target and the parts
// inside it are joined by a dot (a.b = {k(){}} is a.b.k).
const isFunction = (n) => /Function/.test(n.type);

function keyName(key, computed) {
  if (computed) return '<computed>';
  if (key.type === 'Identifier') return key.name;
  if (key.type === 'PrivateIdentifier') return '#' + key.name;
  if (typeof key.value === 'string') return `<${JSON.stringify(key.value)}>`;
  return `<${key.raw}>`;
}

function memberName(expr) {
  const parts = [];
  for (;;) {
    if (expr.type === 'Identifier') return [expr.name, ...parts].join('');
    if (expr.type === 'ThisExpression') return ['this', ...parts].join('');
    if (expr.type !== 'MemberExpression') return null;
    if (!expr.computed) parts.unshift('.' + expr.property.name);
    else if (expr.property.type === 'Literal') parts.unshift(`[${JSON.stringify(expr.property.value)}]`);
    else if (expr.property.type === 'Identifier') parts.unshift(`[${expr.property.name}]`);
    else parts.unshift('[<computed>]');
    expr = expr.object;
  }
}

// infer walks up from ancestors[i] (the scope's parent) as Sentry's
// naming does, with the parts a method's key already gave.
function infer(ancestors, i, parts, accessor) {
  let inObject = false;
  const finish = (open) => {
    let name = parts.join('.');
    if (open && inObject && name) name = '<object>.' + name;
    return accessor + name;
  };
  for (; i >= 0; i--) {
    const a = ancestors[i];
    if (isFunction(a)) return finish(true);
    switch (a.type) {
      case 'ClassExpression':
        if (a.id) parts.unshift(a.id.name);
        break;
      case 'ClassDeclaration':
        parts.unshift(a.id.name);
        return finish(false);
      case 'Property':
        if (ancestors[i - 1] && ancestors[i - 1].type === 'ObjectExpression' && !a.computed && a.key.type === 'Identifier') parts.unshift(a.key.name);
        break;
      case 'ObjectExpression':
        inObject = true;
        break;
      case 'VariableDeclarator':
        if (a.id.type === 'Identifier') {
          parts.unshift(a.id.name);
          return finish(false);
        }
        break;
      case 'AssignmentExpression': {
        const target = a.left.type === 'Identifier' ? a.left.name : a.left.type === 'MemberExpression' ? memberName(a.left) : null;
        if (target) {
          parts.unshift(target);
          return finish(false);
        }
      }
    }
  }
  return finish(true);
}

// withOwnName replaces the innermost part with a function's or class's
// own name.
function withOwnName(ancestors, id) {
  const ctx = infer(ancestors, ancestors.length - 2, [], '');
  if (!id) return ctx;
  const cut = Math.max(ctx.lastIndexOf('.') + 1, ctx.startsWith('<object>.') ? '<object>.'.length : 0);
  return ctx.slice(0, cut) + id.name;
}

function scopeName(node, ancestors) {
  const parent = ancestors[ancestors.length - 2];
  if (/^Class/.test(node.type)) {
    const name = withOwnName(ancestors, node.id);
    return name ? 'new ' + name : '';
  }
  if (parent && parent.type === 'MethodDefinition') {
    const accessor = parent.kind === 'get' ? 'get ' : parent.kind === 'set' ? 'set ' : '';
    return infer(ancestors, ancestors.length - 3, [keyName(parent.key, parent.computed)], accessor);
  }
  if (parent && parent.type === 'Property' && parent.kind !== 'init') {
    const ctx = infer(ancestors, ancestors.length - 3, [], '');
    return `${parent.kind} ${ctx ? ctx + '.' : ''}${keyName(parent.key, parent.computed)}`;
  }
  if (parent && parent.type === 'Property' && parent.method) {
    return infer(ancestors, ancestors.length - 3, [keyName(parent.key, parent.computed)], '');
  }
  return withOwnName(ancestors, node.type === 'ArrowFunctionExpression' ? null : node.id);
}

const scopes = [];
walk.fullAncestor(ast, (node, _state, ancestors) => {
  const parent = ancestors[ancestors.length - 2];
  if (/^Class(Declaration|Expression)$/.test(node.type)) {
    scopes.push([...position(node.start), ...position(node.end), scopeName(node, ancestors)]);
    return;
  }
  if (!isFunction(node)) return;
  if (parent && parent.type === 'MethodDefinition') {
    if (parent.kind === 'constructor') return;
    scopes.push([...position(parent.start), ...position(node.end), scopeName(node, ancestors)]);
    return;
  }
  if (parent && parent.type === 'Property' && (parent.method || parent.kind !== 'init')) {
    scopes.push([...position(parent.start), ...position(node.end), scopeName(node, ancestors)]);
    return;
  }
  scopes.push([...position(node.start), ...position(node.end), scopeName(node, ancestors)]);
});
fs.writeFileSync(out, JSON.stringify(scopes));

// Builds the test app with two bundlers, minified, with source maps and a
// debug id injected by Sentry's bundler plugins (no release, no upload, no
// telemetry), and writes what each probe's frame should be named:
//
//   node build.mjs <outdir>
//
// writes <outdir>/esbuild/index.js(.map), <outdir>/rollup/index.js(.map)
// and <outdir>/expected.json. A probe is a string literal 'probe:…' in a
// function of app/src; its frame is where the literal stands in the
// minified output. The expectation is computed without the Go code's
// rules: Mozilla's source-map maps the frame to its original position, and
// acorn, walking the original source, names the function that encloses it.
import * as esbuild from 'esbuild';
import { rollup } from 'rollup';
import terser from '@rollup/plugin-terser';
import { sentryEsbuildPlugin } from '@sentry/esbuild-plugin';
import { sentryRollupPlugin } from '@sentry/rollup-plugin';
import { SourceMapConsumer } from 'source-map';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';

// With --large, it writes <outdir>/large.js(.map) instead: about 2 MB of
// real libraries (terser, acorn, source-map, Babel) minified by esbuild,
// for the benchmark of parsing a bundle against loading its map.
const large = process.argv[2] === '--large';
const out = process.argv[large ? 3 : 2];
if (!out) {
  console.error('usage: node build.mjs [--large] <outdir>');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(here, 'app', 'src', 'index.js');
const sentry = {
  telemetry: false,
  silent: true,
  release: { create: false, inject: false, finalize: false },
  sourcemaps: { disable: false },
};

async function buildEsbuild(dir) {
  await esbuild.build({
    entryPoints: [entry],
    outfile: path.join(dir, 'index.js'),
    bundle: true,
    minify: true,
    sourcemap: true,
    // A browser build: the whole app inside one function, as a page
    // loads it.
    format: 'iife',
    target: 'es2020',
    logLevel: 'error',
    plugins: [sentryEsbuildPlugin(sentry)],
  });
}

async function buildRollup(dir) {
  const bundle = await rollup({
    input: entry,
    plugins: [terser({ module: true, compress: { passes: 2 } }), sentryRollupPlugin(sentry)],
    logLevel: 'silent',
  });
  await bundle.write({ file: path.join(dir, 'index.js'), format: 'es', sourcemap: true });
  await bundle.close();
}

// probesOf finds every probe literal of a minified file: its marker and
// generated position (0-based line, UTF-16 column, as JavaScript strings
// count).
function probesOf(code) {
  const found = [];
  const lines = code.split('\n');
  lines.forEach((text, line) => {
    const re = /(["'`])probe:([^"'`]*)\1/g;
    let m;
    while ((m = re.exec(text)) !== null) {
      found.push({ marker: m[2], genLine: line, genColumn: m.index });
    }
  });
  return found;
}

// nameOf names a function node from its ancestors in the original source:
// its own name, the variable, property or method it is the value of, the
// class of a method; <anonymous> for anything else (a callback).
function nameOf(node, ancestors) {
  const parent = ancestors[ancestors.length - 2];
  const grand = ancestors[ancestors.length - 3];
  if (node.type === 'FunctionDeclaration') return node.id.name;
  if (parent && parent.type === 'MethodDefinition') {
    const cls = ancestors[ancestors.length - 4];
    const prefix = parent.kind === 'get' ? 'get ' : parent.kind === 'set' ? 'set ' : '';
    if (parent.kind === 'constructor') return `new ${cls.id.name}`;
    return `${prefix}${cls.id.name}.${parent.key.name}`;
  }
  if (node.id) return node.id.name;
  if (parent && parent.type === 'VariableDeclarator') return parent.id.name;
  if (parent && parent.type === 'Property' && grand && grand.type === 'ObjectExpression') {
    const holder = ancestors[ancestors.length - 4];
    if (holder && holder.type === 'VariableDeclarator') return `${holder.id.name}.${parent.key.name}`;
    return `<object>.${parent.key.name}`;
  }
  return '<anonymous>';
}

// innermostFunction finds the innermost function node of a source around
// a position (1-based line, 0-based column in UTF-16 units).
function innermostFunction(source, line, column) {
  const ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lineStarts.push(i + 1);
  const offset = lineStarts[line - 1] + column;
  let best = null;
  walk.fullAncestor(ast, (node, _state, ancestors) => {
    if (!/Function/.test(node.type) || node.start > offset || node.end <= offset) return;
    if (!best || node.start >= best.node.start) best = { node, ancestors: [...ancestors], lineStarts };
  });
  return best;
}

// enclosingFunction names the innermost function of the original source
// around an original position.
function enclosingFunction(source, line, column) {
  const best = innermostFunction(source, line, column);
  return best ? nameOf(best.node, best.ancestors) : null;
}

// lineColumn turns an offset into a 1-based line and 0-based column.
function lineColumn(lineStarts, offset) {
  let line = lineStarts.length - 1;
  while (lineStarts[line] > offset) line--;
  return { line: line + 1, column: offset - lineStarts[line] };
}

// roleOf says how a function stands in its source: what a minifier
// changes when it rewrites one (a function inlined as an immediately
// called expression, an object's property hoisted into a variable).
function roleOf(best) {
  const { node, ancestors } = best;
  const parent = ancestors[ancestors.length - 2];
  if (node.type === 'FunctionDeclaration') return 'declaration';
  switch (parent && parent.type) {
    case 'MethodDefinition':
      return 'method';
    case 'Property':
      return 'property';
    case 'VariableDeclarator':
      return 'variable';
    case 'CallExpression':
      return parent.callee === node ? 'immediately called' : 'argument';
  }
  return 'expression';
}

// rewrittenAt says how the bundler rewrote the probe's function, '' when
// it did not: the minified function around the probe is another function
// (the probe's was inlined into it: the first mapped position of its
// body names the function it came from), or the same one in another role.
function rewrittenAt(code, consumer, p, expected) {
  const fn = innermostFunction(code, p.genLine + 1, p.genColumn);
  if (!fn) return 'inlined into top-level code';
  const body = fn.node.body;
  const at = lineColumn(fn.lineStarts, body.type === 'BlockStatement' ? body.start + 1 : body.start);
  const orig = consumer.originalPositionFor({ line: at.line, column: at.column, bias: SourceMapConsumer.LEAST_UPPER_BOUND });
  const content = orig.source && consumer.sourceContentFor(orig.source, true);
  const original = content && innermostFunction(content, orig.line, orig.column);
  if (!original || nameOf(original.node, original.ancestors) !== expected) return 'inlined';
  const [was, is] = [roleOf(original), roleOf(fn)];
  return was === is ? '' : `${was} made ${is}`;
}

// profilerPosition is where a profiler (V8, the JS Self-Profiling API)
// places the frame of the minified function around a probe: the ( of its
// parameter list, or an arrow's single parameter.
function profilerPosition(code, p) {
  const fn = innermostFunction(code, p.genLine + 1, p.genColumn);
  if (!fn) return { fnLine: -1, fnColumn: -1 };
  const node = fn.node;
  let at = node.params.length > 0 ? node.params[0].start : node.body.start;
  const paren = code.lastIndexOf('(', at);
  if (node.type !== 'ArrowFunctionExpression' || paren >= node.start) at = paren;
  const pos = lineColumn(fn.lineStarts, at);
  return { fnLine: pos.line - 1, fnColumn: pos.column };
}

async function expectations(dir) {
  const code = fs.readFileSync(path.join(dir, 'index.js'), 'utf8');
  const raw = JSON.parse(fs.readFileSync(path.join(dir, 'index.js.map'), 'utf8'));
  const consumer = await new SourceMapConsumer(raw);
  const probes = probesOf(code).map((p) => {
    const orig = consumer.originalPositionFor({ line: p.genLine + 1, column: p.genColumn });
    const content = orig.source && consumer.sourceContentFor(orig.source, true);
    const expected = content ? enclosingFunction(content, orig.line, orig.column) : null;
    const rewritten = rewrittenAt(code, consumer, p, expected);
    const start = profilerPosition(code, p);
    return { ...p, ...start, source: orig.source, line: orig.line, column: orig.column, expected, rewritten };
  });
  consumer.destroy();
  const debugId = (code.match(/sentry-dbid-([0-9a-f-]{36})/) || [])[1] || '';
  return { probes, debugId };
}

async function buildLarge(dir) {
  await esbuild.build({
    stdin: {
      contents: ['terser', 'acorn', 'acorn-walk', 'source-map', '@babel/core']
        .map((m, i) => `export * as m${i} from '${m}';`)
        .join('\n'),
      resolveDir: here,
    },
    outfile: path.join(dir, 'large.js'),
    bundle: true,
    minify: true,
    sourcemap: true,
    platform: 'node',
    format: 'cjs',
    // Babel's optional TypeScript preset is not installed.
    external: ['@babel/preset-typescript'],
    logLevel: 'error',
  });
}

if (large) {
  fs.mkdirSync(out, { recursive: true });
  await buildLarge(out);
  process.exit(0);
}

const result = {};
for (const [name, build] of [['esbuild', buildEsbuild], ['rollup', buildRollup]]) {
  const dir = path.join(out, name);
  fs.mkdirSync(dir, { recursive: true });
  await build(dir);
  result[name] = await expectations(dir);
}
fs.writeFileSync(path.join(out, 'expected.json'), JSON.stringify(result, null, 2));

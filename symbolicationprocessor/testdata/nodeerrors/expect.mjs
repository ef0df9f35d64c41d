// Computes what the processor should make of each event the app sent,
// without the Go code's rules:
//
//   node expect.mjs <events.jsonl> <outdir> [<url> <dir>]
//
// A frame's file is a bundle under <outdir>, or a URL under <url> whose
// bundle is under <dir> (a page's).
// For every in-app frame of every exception of every event (as the SDK
// sent it, read from beforeSend's output), Mozilla's source-map gives the
// original file, line and column of the frame's position (the mapping at
// or before it), and acorn, walking that original source, names the
// function that encloses it: a declaration's name, a class method as
// Class.method, a variable's arrow function by the variable, an
// anonymous function as <anonymous>. Prints one JSON object:
// {event_id: [[{function, file, line, column} | null per frame]]}.
import { SourceMapConsumer } from 'source-map';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';
import fs from 'node:fs';
import path from 'node:path';

const [eventsFile, outdir, pageURL, pageDir] = process.argv.slice(2);

// localFile is the bundle of a frame's file, '' for a file of no bundle.
function localFile(file) {
  if (pageURL && file.startsWith(pageURL)) return path.join(pageDir, file.slice(pageURL.length));
  return file.startsWith(outdir) ? file : '';
}
const consumers = new Map();
async function consumerOf(file) {
  if (!consumers.has(file)) {
    const raw = JSON.parse(fs.readFileSync(file + '.map', 'utf8'));
    consumers.set(file, { c: await new SourceMapConsumer(raw), raw });
  }
  return consumers.get(file);
}

// contentOf is a source's text. Sentry's plugin adds a proxy module under
// the entry's own name, so a name can appear twice in "sources": the
// longer content is the file's.
function contentOf(raw, source) {
  let best = '';
  raw.sources.forEach((s, i) => {
    const text = (raw.sourcesContent || [])[i] || '';
    if (s === source && text.length > best.length) best = text;
  });
  return best;
}

const parsed = new Map();
function functionsOf(source, text) {
  if (!parsed.has(source)) {
    const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
    const fns = [];
    walk.fullAncestor(ast, (node, _state, ancestors) => {
      if (!/Function/.test(node.type)) return;
      fns.push({ node, name: nameOf(node, ancestors) });
    });
    parsed.set(source, fns);
  }
  return parsed.get(source);
}

function nameOf(node, ancestors) {
  const parent = ancestors[ancestors.length - 2];
  if (node.type === 'FunctionDeclaration') return node.id.name;
  if (parent && parent.type === 'MethodDefinition') {
    const cls = ancestors[ancestors.length - 4];
    return parent.kind === 'constructor' ? 'new ' + cls.id.name : cls.id.name + '.' + parent.key.name;
  }
  if (parent && parent.type === 'VariableDeclarator') return parent.id.name;
  if (node.id) return node.id.name;
  return '<anonymous>';
}

// innermost function around a 1-based line and 0-based column
function enclosing(fns, line, column) {
  let best = null;
  for (const f of fns) {
    const { start, end } = f.node.loc;
    const after = line > start.line || (line === start.line && column >= start.column);
    const before = line < end.line || (line === end.line && column < end.column);
    if (after && before && (!best || f.node.start >= best.node.start)) best = f;
  }
  return best ? best.name : null;
}

const expected = {};
for (const line of fs.readFileSync(eventsFile, 'utf8').split('\n').filter(Boolean)) {
  const event = JSON.parse(line);
  const values = (event.exception && event.exception.values) || [];
  expected[event.event_id] = [];
  for (const value of values) {
    const frames = [];
    for (const f of (value.stacktrace && value.stacktrace.frames) || []) {
      const file = localFile(f.abs_path || f.filename || ''); // @sentry/node sends filename
      if (!file || !f.lineno || !f.colno) {
        frames.push(null);
        continue;
      }
      const { c, raw } = await consumerOf(file);
      const pos = c.originalPositionFor({ line: f.lineno, column: f.colno - 1 });
      if (pos.source == null || !pos.source.includes('app/src/')) {
        // outside the app's sources (the SDK bundled into a page): not
        // the test's to check
        frames.push(null);
        continue;
      }
      const text = contentOf(raw, pos.source);
      const name = enclosing(functionsOf(pos.source, text), pos.line, pos.column);
      frames.push({ function: name, source: pos.source, line: pos.line, column: pos.column + 1 });
    }
    expected[event.event_id].push(frames);
  }
}
console.log(JSON.stringify(expected));

// Builds the React Native shaped test app the way a release build does and
// writes it to the directory given as the only argument:
//
//   modules (Babel lowers classes, as Metro's preset does for Hermes)
//     → one bundle of __d(factory, id) modules, its map concatenated
//     → terser (Metro's minifier and its options)
//     → hermesc -emit-binary -O -output-source-map (the Hermes runtime's own
//       compiler, so that the bytecode version matches the runtime)
//     → metro-source-map's composeSourceMaps(packager map, Hermes map)
//     → the debug id of Sentry's React Native tooling: `//# debugId=` in the
//       bundle and `debugId` in the packager map, copied into the composed map.
//
// Each module's function map (x_facebook_sources) is made from its original
// source by metro-source-map's generateFunctionMap, as Metro does.
//
// Out: build/index.android.bundle (bytecode), build/index.android.bundle.js
// (the minified bundle), sourcemaps/index.android.bundle.map (the composed
// map Sentry symbolicates with) and build.json (the debug id, the paths).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const babel = require('@babel/core');
const parser = require('@babel/parser');
const { generateFunctionMap, composeSourceMaps } = require('metro-source-map');
const { SourceMapConsumer, SourceMapGenerator } = require('source-map');
const terser = require('terser');

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  throw new Error('usage: node build.mjs OUT_DIR');
}
const hermesBin = path.join(here, 'node_modules/hermes-engine-cli/linux64-bin');
// Module ids are the order here: index.js requires 1, cart.js requires 2.
const modules = ['index.js', 'src/cart.js', 'src/pricing.js'];
const prelude = [
  'var __modules = {};',
  'function __d(factory, id) { __modules[id] = { factory: factory, exports: {}, done: false }; }',
  'function __r(id) { var m = __modules[id]; if (!m.done) { m.done = true; m.factory(m.exports, __r); } return m.exports; }',
];

// bundle concatenates the modules, each in its factory, and their maps.
async function bundle() {
  const lines = [...prelude];
  const map = new SourceMapGenerator({ file: 'index.android.bundle.js' });
  const functionMaps = {};
  for (const [id, name] of modules.entries()) {
    const code = fs.readFileSync(path.join(here, 'app', name), 'utf8');
    functionMaps[name] = generateFunctionMap(parser.parse(code, { sourceType: 'script' }), { filename: name });
    const lowered = babel.transformSync(code, {
      filename: name,
      sourceFileName: name,
      babelrc: false,
      configFile: false,
      sourceMaps: true,
      plugins: [require.resolve('@babel/plugin-transform-classes')],
    });
    lines.push('__d(function (exports, require) {');
    const offset = lines.length; // generated lines before the module's first
    await SourceMapConsumer.with(lowered.map, null, (c) => {
      c.eachMapping((m) => {
        if (m.source == null) return;
        map.addMapping({
          generated: { line: m.generatedLine + offset, column: m.generatedColumn },
          original: { line: m.originalLine, column: m.originalColumn },
          source: name,
          name: m.name ?? undefined,
        });
      });
    });
    map.setSourceContent(name, code);
    lines.push(...lowered.code.split('\n'), `}, ${id});`);
  }
  lines.push('__r(0);');
  return { code: lines.join('\n') + '\n', map: map.toJSON(), functionMaps };
}

// debugIdOf is a UUID of the bundle's content, as Sentry's bundler
// plugins derive theirs.
function debugIdOf(code) {
  const h = crypto.createHash('sha256').update(code).digest('hex');
  const variant = ((parseInt(h[16], 16) & 3) | 8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const bundled = await bundle();
// Metro's terser options (metro-minify-terser): no top-level mangling,
// single-use functions not inlined.
const minified = await terser.minify(
  { 'index.android.bundle.js': bundled.code },
  {
    mangle: { toplevel: false },
    compress: { reduce_funcs: false },
    output: { ascii_only: true, quote_style: 3, wrap_iife: true },
    sourceMap: { content: bundled.map, includeSources: true },
    toplevel: false,
  },
);
const packagerMap = JSON.parse(minified.map);
packagerMap.x_facebook_sources = packagerMap.sources.map((s) => (bundled.functionMaps[s] ? [bundled.functionMaps[s]] : null));
const debugId = debugIdOf(minified.code);
packagerMap.debugId = debugId;

fs.mkdirSync(path.join(out, 'build'), { recursive: true });
fs.mkdirSync(path.join(out, 'sourcemaps'), { recursive: true });
const jsBundle = path.join(out, 'build/index.android.bundle.js');
const bytecode = path.join(out, 'build/index.android.bundle');
fs.writeFileSync(jsBundle, `${minified.code}\n//# debugId=${debugId}\n`);
fs.writeFileSync(path.join(out, 'build/index.android.bundle.packager.map'), JSON.stringify(packagerMap));
execFileSync(path.join(hermesBin, 'hermesc'), ['-emit-binary', '-O', '-output-source-map', '-out', bytecode, jsBundle], {
  stdio: 'inherit',
});
const hermesMap = JSON.parse(fs.readFileSync(`${bytecode}.map`, 'utf8'));
const composed = composeSourceMaps([packagerMap, hermesMap]);
composed.debugId = debugId;
composed.debug_id = debugId;
const composedPath = path.join(out, 'sourcemaps/index.android.bundle.map');
fs.writeFileSync(composedPath, JSON.stringify(composed));
fs.writeFileSync(
  path.join(out, 'build.json'),
  JSON.stringify({ debugId, bytecode, map: composedPath, hermes: path.join(hermesBin, 'hermes') }, null, 2),
);

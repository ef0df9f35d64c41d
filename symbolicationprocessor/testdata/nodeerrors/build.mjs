// Builds the app twice, minified differently, each with a debug id injected
// by Sentry's esbuild plugin (no release, no upload, no telemetry):
//
//   node build.mjs <outdir>
//
// writes <outdir>/v1/app.js(.map): minified, one line;
// <outdir>/v2/app.js(.map): identifiers minified, whitespace kept, under a
// banner, so that every frame has other names, lines and columns; and
// <outdir>/browser/app.js(.map): the page's bundle, minified, for a browser.
import * as esbuild from 'esbuild';
import { sentryEsbuildPlugin } from '@sentry/esbuild-plugin';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const out = process.argv[2];
if (!out) {
  console.error('usage: node build.mjs <outdir>');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const common = {
  entryPoints: [path.join(here, 'app', 'src', 'index.js')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  sourcemap: true,
  external: ['@sentry/node'],
  logLevel: 'error',
  plugins: [sentryEsbuildPlugin({
    telemetry: false,
    silent: true,
    release: { create: false, inject: false, finalize: false },
    sourcemaps: { disable: false },
  })],
};
await esbuild.build({ ...common, outfile: path.join(out, 'v1', 'app.js'), minify: true });
await esbuild.build({
  ...common,
  outfile: path.join(out, 'v2', 'app.js'),
  minifyIdentifiers: true,
  minifySyntax: true,
  banner: { js: '/* shop, build 2 */\n"use strict";\n' },
});
await esbuild.build({
  ...common,
  entryPoints: [path.join(here, 'app', 'src', 'browser.js')],
  outfile: path.join(out, 'browser', 'app.js'),
  platform: 'browser',
  format: 'iife',
  target: 'es2020',
  external: [],
  minify: true,
});

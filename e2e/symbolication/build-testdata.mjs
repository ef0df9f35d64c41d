// Rebuilds symbolication/sourcemap/testdata/dist from testdata/src/app.js:
// a minified bundle with its source map and a debug id injected by Sentry's
// esbuild plugin (no upload, no telemetry). Run from this directory after
// `npm ci`: node build-testdata.mjs
import * as esbuild from 'esbuild';
import { sentryEsbuildPlugin } from '@sentry/esbuild-plugin';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const testdata = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../symbolication/sourcemap/testdata');
await esbuild.build({
  absWorkingDir: testdata,
  entryPoints: ['src/app.js'],
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'iife',
  outfile: 'dist/app.min.js',
  logLevel: 'error',
  plugins: [sentryEsbuildPlugin({ telemetry: false, release: { create: false, inject: false }, sourcemaps: { disable: false } })],
});

// Builds a production bundle the way a Sentry user ships one: esbuild with
// minification and source maps, and Sentry's esbuild plugin injecting a
// debug id into the bundle. The plugin is told not to create releases,
// upload or send telemetry: it only injects (without an auth token it would
// not upload anyway). The symbolication e2e test runs it as
//
//   node build.mjs <entry> <outfile> <browser|node>
//
// Packages resolve from this directory's node_modules, wherever the entry
// is. A node build leaves the Sentry SDK outside the bundle (its profiler
// is a native addon) and loads it from here through NODE_PATH.
import * as esbuild from 'esbuild';
import { sentryEsbuildPlugin } from '@sentry/esbuild-plugin';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const [entry, outfile, platform] = process.argv.slice(2);
if (!entry || !outfile || !['browser', 'node'].includes(platform)) {
  console.error('usage: node build.mjs <entry> <outfile> <browser|node>');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
await esbuild.build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  minify: true,
  sourcemap: true,
  platform,
  format: platform === 'node' ? 'cjs' : 'iife',
  target: platform === 'node' ? 'node18' : 'es2020',
  external: platform === 'node' ? ['@sentry/*'] : [],
  nodePaths: [path.join(here, 'node_modules')],
  logLevel: 'error',
  plugins: [
    sentryEsbuildPlugin({
      telemetry: false,
      silent: true,
      release: { create: false, inject: false, finalize: false },
      sourcemaps: { disable: false },
    }),
  ],
});

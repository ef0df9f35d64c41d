// Computes what Sentry shows for Hermes frames, independently of the Go
// resolver: Mozilla's source-map finds the original position of each
// frame's bytecode offset in the composed map (the segment at or before
// it), and metro-symbolicate's SourceMetadataMapConsumer names it by the
// function map (x_facebook_sources) of its source, as Metro's own
// symbolicator and Sentry do.
//
// In (stdin): {"map": path, "frames": [{"function": f, "colno": c}, ...]},
// colno as the React Native SDK sends it (bytecode offset + 1).
// Out (stdout): one {"function", "file", "line", "column"} per frame
// (line and column 1-based), or null where the map has nothing.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { SourceMapConsumer } = require('source-map');
const SourceMetadataMapConsumer = require('metro-symbolicate/private/SourceMetadataMapConsumer').default;

const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const map = JSON.parse(fs.readFileSync(input.map, 'utf8'));
const metadata = new SourceMetadataMapConsumer(map, (s) => s);
const out = await SourceMapConsumer.with(map, null, (c) =>
  input.frames.map((f) => {
    const pos = c.originalPositionFor({ line: 1, column: f.colno - 1, bias: SourceMapConsumer.GREATEST_LOWER_BOUND });
    if (pos.source == null) {
      return null;
    }
    const name = metadata.functionNameFor({ line: pos.line, column: pos.column, source: pos.source });
    return { function: name ?? f.function, file: pos.source, line: pos.line, column: pos.column + 1 };
  }),
);
process.stdout.write(JSON.stringify(out));

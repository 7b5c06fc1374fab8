#!/usr/bin/env node
/**
 * Builds `data/domain-vectors.bin`, the word vectors behind search's closeness in meaning (README "Search", "Meaning"):
 * vectors learnt from how words are used in the public text of MCP packages on npm — their READMEs and the sentences
 * in their code (tool and parameter descriptions) — so "inbox" lands near `emails` and `messages`, "folder" near
 * `directory`, "popup" near `dialog`, "stash" near `commit`.
 *
 *   node scripts/build-domain-vectors.mjs [--packages scripts/domain-packages.txt] [--cache DIR] [--out FILE]
 *
 * Needs the npm registry (build time only; the workbench never fetches anything for search). Steps, each without a
 * hand-picked word:
 * 1. Every `name@version` of the package list is downloaded from the registry (its integrity checked) and unpacked
 *    with `tar`; kept are its README and the string literals of its JavaScript that read like a sentence.
 * 2. Text is split into sentences; a sentence seen before is dropped, and so is every sentence that appears verbatim
 *    in the search benchmark's corpus (bench/search/corpus), so the benchmark measures what the vectors learnt from
 *    other servers, not a copy of its own tools' descriptions. No package of the benchmark is in the list (a test
 *    checks it).
 * 3. Words (lower case, camelCase split, two letters or more) seen at least `MIN_COUNT` times, the `MAX_WORDS` most
 *    frequent, are counted together within `WINDOW` words of each other (weighted 1/distance); the counts become
 *    positive pointwise mutual information (context counts smoothed by the power 0.75), and a randomized SVD (seeded,
 *    so the same input gives the same bytes) reduces each word's row to `DIMS` numbers.
 * 4. The file has the same format as data/english-vectors.bin (scripts/word-vectors-file.mjs writes both), words in
 *    order of frequency, each vector unit length and quantised to int8 with its own scale.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wordVectorsFile } from './word-vectors-file.mjs';

const DIMS = 100;
const WINDOW = 4;
const MIN_COUNT = 5;
const MAX_WORDS = 40_000;
const MAX_TEXT_PER_PACKAGE = 150_000;
/**
 * The randomized SVD's extra columns and power iterations: enough for the subspace to settle, so the words' vectors
 * (and search's figures) barely depend on the seed; with 20 and 3, two seeds moved global hit@1 by 7 points.
 */
const OVERSAMPLING = 60;
const POWER_ITERATIONS = 12;
const REGISTRY = 'https://registry.npmjs.org/';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const listFile = option('packages', join(root, 'scripts', 'domain-packages.txt'));
const cache = option('cache', join(tmpdir(), 'mcp-workbench-domain-packages'));
const out = option('out', join(root, 'data', 'domain-vectors.bin'));

const packages = readFileSync(listFile, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

// 1. Texts of every package (cached per name@version, so a second run reads no network).
mkdirSync(cache, { recursive: true });
const texts = new Map();
let next = 0;
let failed = 0;
async function worker() {
  while (next < packages.length) {
    const spec = packages[next++];
    try {
      texts.set(spec, await packageText(spec));
    } catch (error) {
      failed++;
      console.error(`${spec}: ${error instanceof Error ? error.message : String(error)} (left out)`);
      texts.set(spec, '');
    }
  }
}
await Promise.all(Array.from({ length: 12 }, worker));
console.error(`${packages.length} packages read (${failed} left out)`);

async function packageText(spec) {
  const at = spec.lastIndexOf('@');
  const name = spec.slice(0, at);
  const version = spec.slice(at + 1);
  const file = join(cache, `${name.replace(/[@/]/g, '_')}@${version}.txt`);
  if (existsSync(file)) return readFileSync(file, 'utf8');
  const meta = await (await fetch(`${REGISTRY}${name.replace('/', '%2f')}/${version}`)).json();
  if (!meta?.dist?.tarball) throw new Error('no such version in the registry');
  const tarball = Buffer.from(await (await fetch(meta.dist.tarball)).arrayBuffer());
  if (meta.dist.integrity) {
    const [algorithm, digest] = meta.dist.integrity.split('-');
    if (createHash(algorithm).update(tarball).digest('base64') !== digest) throw new Error('integrity check failed');
  }
  const dir = mkdtempSync(join(tmpdir(), 'mcp-workbench-domain-'));
  try {
    writeFileSync(join(dir, 'p.tgz'), tarball);
    await promisify(execFile)('tar', ['-xzf', 'p.tgz'], { cwd: dir });
    const text = textOf(dir);
    writeFileSync(file, text);
    return text;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A package's README(s) and the sentence-like string literals of its JavaScript. */
function textOf(dir) {
  const parts = [];
  const walk = (d, depth) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && depth < 8) walk(p, depth + 1);
      } else if (/^readme(\.md|\.markdown|\.txt)?$/i.test(e.name) && depth <= 2) {
        parts.push(readFileSync(p, 'utf8').slice(0, 200_000));
      } else if (/\.(c|m)?js$/.test(e.name) && !e.name.endsWith('.min.js') && statSync(p).size <= 3_000_000) {
        const source = readFileSync(p, 'utf8');
        for (const m of source.matchAll(/(["'`])((?:(?!\1)[^\\\n]|\\.){20,600})\1/g)) {
          const s = m[2];
          if (/^[A-Z][a-z]+( [A-Za-z0-9'(),.:/-]+){3,}/.test(s) && !/[{}<>;=]|\$\{|https?:/.test(s)) parts.push(s.replace(/\\n/g, ' '));
        }
      }
    }
  };
  walk(dir, 0);
  return parts.join('\n');
}

// 2. Sentences: each once, none that is in the benchmark corpus.
const normal = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
const split = (s) => s.split(/\n|(?<=[.!?])\s+/);
/**
 * A README's text without its markup: HTML tags (a `<picture>` of badges would teach "picture" that it means "dark"
 * and "light"), link targets and bare URLs. Code blocks stay: their examples show tools in use.
 */
const prose = (s) =>
  s
    .replace(/<[^>\n]{0,1000}>/g, ' ')
    .replace(/\]\([^)\s]*\)/g, '] ')
    .replace(/https?:\/\/\S+/g, ' ');
const benchmark = new Set();
const corpusDir = join(root, 'bench', 'search', 'corpus');
const collect = (x) => {
  if (typeof x === 'string') {
    for (const s of split(x)) if (normal(s).split(' ').length >= 4) benchmark.add(normal(s));
  } else if (Array.isArray(x)) x.forEach(collect);
  else if (x && typeof x === 'object') Object.values(x).forEach(collect);
};
for (const f of readdirSync(corpusDir).filter((f) => f.endsWith('.json')).sort()) collect(JSON.parse(readFileSync(join(corpusDir, f), 'utf8')));

const seen = new Set();
const sentences = [];
let dropped = 0;
for (const spec of [...texts.keys()].sort()) {
  for (let line of split(prose(texts.get(spec).slice(0, MAX_TEXT_PER_PACKAGE)))) {
    line = line.trim();
    if (line.length < 12 || seen.has(line)) continue;
    seen.add(line);
    if (benchmark.has(normal(line))) {
      dropped++;
      continue;
    }
    const words = line.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/).filter((w) => w.length >= 2);
    if (words.length >= 3) sentences.push(words);
  }
}
console.error(`${sentences.length} sentences (${dropped} left out as the benchmark's own)`);

// 3. Counts within the window, PPMI, randomized SVD.
const frequency = new Map();
for (const s of sentences) for (const w of s) frequency.set(w, (frequency.get(w) ?? 0) + 1);
const vocabulary = [...frequency]
  .filter(([, c]) => c >= MIN_COUNT)
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  .slice(0, MAX_WORDS)
  .map(([w]) => w);
const n = vocabulary.length;
const id = new Map(vocabulary.map((w, i) => [w, i]));
const pairs = new Map();
const rowSum = new Float64Array(n);
for (const s of sentences) {
  const ids = s.map((w) => id.get(w) ?? -1);
  for (let i = 0; i < ids.length; i++) {
    const a = ids[i];
    if (a < 0) continue;
    for (let j = i + 1; j <= i + WINDOW && j < ids.length; j++) {
      const b = ids[j];
      if (b < 0 || b === a) continue;
      const weight = 1 / (j - i);
      const key = a < b ? a * n + b : b * n + a;
      pairs.set(key, (pairs.get(key) ?? 0) + weight);
      rowSum[a] += weight;
      rowSum[b] += weight;
    }
  }
}
const context = rowSum.map((c) => Math.pow(c, 0.75));
const contextTotal = context.reduce((a, b) => a + b, 0);
const rows = Array.from({ length: n }, () => []);
for (const [key, c] of [...pairs].sort((x, y) => x[0] - y[0])) {
  const a = Math.floor(key / n);
  const b = key % n;
  const ab = Math.log((c * contextTotal) / (rowSum[a] * context[b]));
  const ba = Math.log((c * contextTotal) / (rowSum[b] * context[a]));
  if (ab > 0) rows[a].push(b, ab);
  if (ba > 0) rows[b].push(a, ba);
}
pairs.clear();
let nnz = 0;
for (const r of rows) nnz += r.length / 2;
const rowStart = new Int32Array(n + 1);
const columns = new Int32Array(nnz);
const values = new Float64Array(nnz);
for (let i = 0, k = 0; i < n; i++) {
  rowStart[i] = k;
  const r = rows[i];
  for (let t = 0; t < r.length; t += 2, k++) {
    columns[k] = r[t];
    values[k] = r[t + 1];
  }
  rows[i] = null;
  rowStart[i + 1] = k;
}
console.error(`${n} words, ${nnz} positive pairs`);

const L = DIMS + OVERSAMPLING;
/** M·X for the n×L row-major X. */
const multiply = (x) => {
  const y = new Float64Array(n * L);
  for (let i = 0; i < n; i++) {
    for (let k = rowStart[i]; k < rowStart[i + 1]; k++) {
      const v = values[k];
      const xo = columns[k] * L;
      for (let d = 0, yo = i * L; d < L; d++) y[yo + d] += v * x[xo + d];
    }
  }
  return y;
};
/** Orthonormal columns (modified Gram-Schmidt). */
const orthonormal = (y) => {
  for (let c = 0; c < L; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let i = 0; i < n; i++) dot += y[i * L + c] * y[i * L + p];
      for (let i = 0; i < n; i++) y[i * L + c] -= dot * y[i * L + p];
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += y[i * L + c] ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < n; i++) y[i * L + c] /= norm;
  }
  return y;
};
let seed = 12345;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const gaussian = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
let q = new Float64Array(n * L).map(gaussian);
q = orthonormal(multiply(q));
for (let i = 0; i < POWER_ITERATIONS; i++) q = orthonormal(multiply(q));
// The small symmetric matrix Qᵀ·M·Q, its eigenvectors by Jacobi rotations; a word's vector is its row of Q·V.
const mq = multiply(q);
const s = Array.from({ length: L }, (_, a) => Float64Array.from({ length: L }, (_, b) => {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += q[i * L + a] * mq[i * L + b];
  return sum;
}));
for (let a = 0; a < L; a++) for (let b = a + 1; b < L; b++) s[a][b] = s[b][a] = (s[a][b] + s[b][a]) / 2;
const v = Array.from({ length: L }, (_, i) => Float64Array.from({ length: L }, (_, j) => (i === j ? 1 : 0)));
for (let sweep = 0; sweep < 50; sweep++) {
  let off = 0;
  for (let p = 0; p < L; p++) {
    for (let r = p + 1; r < L; r++) {
      off += s[p][r] ** 2;
      if (Math.abs(s[p][r]) < 1e-12) continue;
      const theta = (s[r][r] - s[p][p]) / (2 * s[p][r]);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1);
      const sn = t * c;
      for (let k = 0; k < L; k++) [s[k][p], s[k][r]] = [c * s[k][p] - sn * s[k][r], sn * s[k][p] + c * s[k][r]];
      for (let k = 0; k < L; k++) [s[p][k], s[r][k]] = [c * s[p][k] - sn * s[r][k], sn * s[p][k] + c * s[r][k]];
      for (let k = 0; k < L; k++) [v[k][p], v[k][r]] = [c * v[k][p] - sn * v[k][r], sn * v[k][p] + c * v[k][r]];
    }
  }
  if (off < 1e-10) break;
}
const top = Array.from({ length: L }, (_, i) => [Math.abs(s[i][i]), i])
  .sort((a, b) => b[0] - a[0] || a[1] - b[1])
  .slice(0, DIMS)
  .map(([, i]) => i);

// 4. The file.
const words = vocabulary.filter((w) => /^[a-z]{2,}$/.test(w));
const buffer = wordVectorsFile(words, DIMS, (word) => {
  const i = id.get(word);
  return top.map((col) => {
    let sum = 0;
    for (let a = 0; a < L; a++) sum += q[i * L + a] * v[a][col];
    return sum;
  });
});
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, buffer);
console.log(`${out}: ${words.length} words, ${DIMS} dimensions, ${buffer.length} bytes, from ${packages.length - failed} packages`);

import { readFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { fileURLToPath } from 'node:url';
import { createLogger, type Logger } from '../log.js';
import { errorMessage } from '../errors.js';
import { stem } from './search-text.js';
import type { SearchIndex } from './search-index.js';

/**
 * The English bridge (README "Search"): general-English word vectors (GloVe, reduced at build time by
 * scripts/build-english-vectors.mjs to the most frequent English words, int8 per vector with a scale) that lead a
 * query word no tool uses to the index's own words nearest it in meaning ("automobile" to `car`). Loaded lazily, once,
 * when a bridge is first built; never fetched from the network.
 */
export interface EnglishVectors {
  dims: number;
  /** Row of each word. */
  rows: ReadonlyMap<string, number>;
  scales: Float32Array;
  data: Int8Array;
}

/** Where the shipped vectors are, beside `src`/`dist` in the package. */
export const ENGLISH_VECTORS_PATH = fileURLToPath(new URL('../../data/english-vectors.bin', import.meta.url));

const HEADER = 20;

/** Reads the file format written by scripts/build-english-vectors.mjs; a typed failure names what is wrong. */
export function parseEnglishVectors(bytes: Uint8Array): { ok: true; vectors: EnglishVectors } | { ok: false; reason: string } {
  if (bytes.length < HEADER) return { ok: false, reason: 'shorter than its header' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = String.fromCharCode(bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!);
  if (magic !== 'WBEV' || view.getUint32(4, true) !== 1) return { ok: false, reason: 'not a version 1 vector file' };
  const count = view.getUint32(8, true);
  const dims = view.getUint32(12, true);
  const wordBytes = view.getUint32(16, true);
  const scalesAt = HEADER + Math.ceil(wordBytes / 4) * 4;
  const vectorsAt = scalesAt + count * 4;
  if (dims === 0 || bytes.length !== vectorsAt + count * dims) return { ok: false, reason: `${bytes.length} bytes, not the ${vectorsAt + count * dims} its header says` };
  const words = new TextDecoder().decode(bytes.subarray(HEADER, HEADER + wordBytes)).split('\n');
  if (words.length !== count) return { ok: false, reason: `${words.length} words, not the ${count} its header says` };
  const rows = new Map<string, number>();
  words.forEach((w, i) => rows.set(w, i));
  // Copies (a Buffer's slice would share, and its offset need not be aligned for floats).
  const scales = new Float32Array(new Uint8Array(bytes.subarray(scalesAt, vectorsAt)).buffer);
  const data = new Int8Array(new Uint8Array(bytes.subarray(vectorsAt)).buffer);
  return { ok: true, vectors: { dims, rows, scales, data } };
}

/** The vectors in `path`, or null (and one warning on `log`) when the file is missing or corrupt; never throws. */
export function loadEnglishVectors(path: string, log: Logger): EnglishVectors | null {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    log.warn(`search's English word vectors could not be read (${errorMessage(error)}); search matches words only`);
    return null;
  }
  const parsed = parseEnglishVectors(bytes);
  if (parsed.ok) return parsed.vectors;
  log.warn(`search's English word vectors in ${path} are not usable (${parsed.reason}); search matches words only`);
  return null;
}

let shipped: { vectors: EnglishVectors | null } | undefined;

/**
 * The shipped vectors, read on first use only; a missing or corrupt file is said once, on `log` (the serving process's
 * logger, so its format and level apply) or else on stderr.
 */
export function shippedEnglishVectors(log?: Logger): EnglishVectors | null {
  shipped ??= { vectors: loadEnglishVectors(ENGLISH_VECTORS_PATH, log ?? createLogger({ level: 'warn' }).child('search')) };
  return shipped.vectors;
}

/** A word's unit vector, or undefined when the vectors do not have it. */
export function unitVector(vectors: EnglishVectors, word: string): Float32Array | undefined {
  const row = vectors.rows.get(word);
  if (row === undefined) return undefined;
  const { dims, data } = vectors;
  const out = new Float32Array(dims);
  let norm = 0;
  for (let d = 0; d < dims; d++) {
    const x = data[row * dims + d]!;
    out[d] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < dims; d++) out[d]! /= norm;
  return out;
}

export interface EnglishParams {
  /** Least cosine between a query word and an index word for the one to lead to the other. */
  minCosine: number;
  /** Most index words one query word leads to. */
  top: number;
}

export const DEFAULT_ENGLISH: EnglishParams = { minCosine: 0.7, top: 2 };

/** Index terms near a query word in meaning, with the cosine as their strength. */
export interface EnglishBridge {
  near(word: string): readonly { term: string; strength: number }[];
  /** The vectors it was built from (search also tops up short answers by meaning with them: search-meaning). */
  readonly vectors: EnglishVectors;
}

/**
 * Unit vectors of index words, kept across bridge builds (the most recently used 100,000): a catalog change costs only
 * its new words. An empty vector stands for a word the vectors do not have.
 */
const surfaceVectors = new LRUCache<string, Float32Array>({ max: 100_000 });
const NO_VECTOR = new Float32Array(0);

function surfaceVector(vectors: EnglishVectors, word: string): Float32Array | undefined {
  let v = surfaceVectors.get(word);
  if (v === undefined) surfaceVectors.set(word, (v = unitVector(vectors, word) ?? NO_VECTOR));
  return v.length > 0 ? v : undefined;
}

/**
 * The English bridge over every index given: one unit vector per index term (the normalised sum of its surface
 * words' vectors), so a query word costs one pass of dot products over the index's terms, never over all English.
 * Answers are remembered per query word (the most recently used 1,000).
 */
export function englishBridge(vectors: EnglishVectors, indexes: readonly SearchIndex[], params: EnglishParams = DEFAULT_ENGLISH): EnglishBridge {
  const { dims } = vectors;
  const sums = new Map<string, Float32Array>();
  for (const index of indexes) {
    for (const [surface, term] of index.vocabulary) {
      const v = surfaceVector(vectors, surface);
      if (!v) continue;
      let sum = sums.get(term);
      if (!sum) sums.set(term, (sum = new Float32Array(dims)));
      for (let d = 0; d < dims; d++) sum[d]! += v[d]!;
    }
  }
  const terms = [...sums.keys()].sort();
  const matrix = new Float32Array(terms.length * dims);
  terms.forEach((term, i) => {
    const sum = sums.get(term)!;
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += sum[d]! * sum[d]!;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < dims; d++) matrix[i * dims + d] = sum[d]! / norm;
  });
  const memo = new LRUCache<string, readonly { term: string; strength: number }[]>({ max: 1_000 });
  return {
    vectors,
    near(word) {
      let found = memo.get(word);
      if (found) return found;
      found = nearest(surfaceVector(vectors, word), stem(word), terms, matrix, dims, params);
      memo.set(word, found);
      return found;
    },
  };
}

/** The `top` terms (other than the word's own stem) whose rows of `matrix` have the greatest cosine with `q`, best first. */
function nearest(
  q: Float32Array | undefined,
  own: string,
  terms: readonly string[],
  matrix: Float32Array,
  dims: number,
  params: EnglishParams,
): { term: string; strength: number }[] {
  if (!q) return [];
  const best: { term: string; strength: number }[] = [];
  for (let i = 0; i < terms.length; i++) {
    let dot = 0;
    for (let d = 0, at = i * dims; d < dims; d++) dot += q[d]! * matrix[at + d]!;
    if (dot < params.minCosine || terms[i] === own) continue;
    if (best.length === params.top && dot <= best[best.length - 1]!.strength) continue;
    best.push({ term: terms[i]!, strength: dot });
    best.sort((a, b) => b.strength - a.strength || (a.term < b.term ? -1 : 1));
    if (best.length > params.top) best.pop();
  }
  return best;
}

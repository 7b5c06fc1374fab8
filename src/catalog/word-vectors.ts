import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger, type Logger } from '../log.js';
import { errorMessage } from '../errors.js';

/**
 * The word vectors search ships (README "Search"), both in one file format, read lazily, once, never fetched:
 * - English: general-English vectors (GloVe, reduced by scripts/build-english-vectors.mjs to the most frequent English
 *   words) behind the English bridge, which leads a query word no tool uses to the index's own words nearest it
 *   ("automobile" to `car`; search-english).
 * - Domain: vectors learnt from the public text of MCP packages on npm (scripts/build-domain-vectors.mjs), behind
 *   closeness in meaning between a query and a tool ("check my inbox" near a tool that lists mail messages;
 *   search-meaning).
 * A vector is int8 with a scale per word; words are stored most frequent first.
 */
export interface WordVectors {
  dims: number;
  /** Row of each word (its frequency rank). */
  rows: ReadonlyMap<string, number>;
  scales: Float32Array;
  data: Int8Array;
}

/** Which shipped vectors: their file, and what search does without them (said in the one warning). */
const SHIPPED = {
  english: { file: 'english-vectors.bin', label: 'English word vectors', without: 'search matches words only' },
  domain: { file: 'domain-vectors.bin', label: 'domain word vectors', without: 'search ranks by words alone, without closeness in meaning' },
} as const;
export type ShippedVectors = keyof typeof SHIPPED;

/** Where each shipped file is, beside `src`/`dist` in the package. */
export const vectorsPath = (which: ShippedVectors): string => fileURLToPath(new URL(`../../data/${SHIPPED[which].file}`, import.meta.url));

const HEADER = 20;

/** Reads the file format written by scripts/build-*-vectors.mjs; a typed failure names what is wrong. */
export function parseWordVectors(bytes: Uint8Array): { ok: true; vectors: WordVectors } | { ok: false; reason: string } {
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
export function loadWordVectors(path: string, which: ShippedVectors, log: Logger): WordVectors | null {
  const { label, without } = SHIPPED[which];
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    log.warn(`search's ${label} could not be read (${errorMessage(error)}); ${without}`);
    return null;
  }
  const parsed = parseWordVectors(bytes);
  if (parsed.ok) return parsed.vectors;
  log.warn(`search's ${label} in ${path} are not usable (${parsed.reason}); ${without}`);
  return null;
}

const shipped = new Map<ShippedVectors, WordVectors | null>();

/**
 * The shipped vectors, read on first use only; a missing or corrupt file is said once, on `log` (the serving process's
 * logger, so its format and level apply) or else on stderr.
 */
export function shippedVectors(which: ShippedVectors, log?: Logger): WordVectors | null {
  if (!shipped.has(which)) shipped.set(which, loadWordVectors(vectorsPath(which), which, log ?? createLogger({ level: 'warn' }).child('search')));
  return shipped.get(which)!;
}

/** A word's unit vector, or undefined when the vectors do not have it. */
export function unitVector(vectors: WordVectors, word: string): Float32Array | undefined {
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

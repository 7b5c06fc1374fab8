import type { FullEntry } from './catalog-index.js';
import { unitVector, type WordVectors } from './word-vectors.js';
import { firstSentenceEnd, withoutLabel, type SearchIndex } from './search-index.js';
import { STOP_WORDS, words } from './search-text.js';

/**
 * Closeness in meaning between a query and a tool (README "Search", "Meaning"), from the shipped domain word vectors
 * (word-vectors: learnt from the public text of MCP packages): each side is the weighted mean of its words' unit
 * vectors — the tool's name, title and the first sentence of its description; the query's words — and the two are
 * compared by cosine. A word weighs a / (a + p) with p its estimated frequency (the vectors are stored most frequent
 * first, and p follows Zipf's law from that rank), so "get", "file" and "new" count for less than "directory" or
 * "observation". Stop words and words the vectors do not have count for nothing.
 */

/** The frequency weighting's constant: a word as frequent as 1 in 1,000 counts half. */
const SMOOTHING = 1e-3;

/**
 * Tools' meaning vectors (undefined: none of its words has a vector) per set of vectors and entry object: a catalog
 * change makes new entries, and the old ones are let go with their catalog.
 */
const toolMeanings = new WeakMap<WordVectors, WeakMap<FullEntry, Float32Array | undefined>>();

/** The unit meaning vector of some words, or undefined when none of them has a vector. */
export function meaningOf(vectors: WordVectors, text: readonly string[]): Float32Array | undefined {
  const out = new Float32Array(vectors.dims);
  const harmonic = Math.log(vectors.rows.size + 10);
  let any = false;
  for (const word of text) {
    if (STOP_WORDS.has(word)) continue;
    const rank = vectors.rows.get(word);
    const unit = rank === undefined ? undefined : unitVector(vectors, word);
    if (rank === undefined || !unit) continue;
    const p = 1 / ((rank + 10) * harmonic);
    const weight = SMOOTHING / (SMOOTHING + p);
    for (let d = 0; d < unit.length; d++) out[d]! += weight * unit[d]!;
    any = true;
  }
  if (!any) return undefined;
  return toUnitLength(out) ? out : undefined;
}

/** What a tool is about, in words: its name, its title and the first sentence of its description. */
export function toolMeaningWords(entry: FullEntry): string[] {
  const description = withoutLabel(entry.description);
  return [...words(entry.original_name), ...words(entry.title ?? entry.annotations?.title ?? ''), ...words(description.slice(0, firstSentenceEnd(description)))];
}

function toolMeaning(vectors: WordVectors, entry: FullEntry): Float32Array | undefined {
  let known = toolMeanings.get(vectors);
  if (!known) toolMeanings.set(vectors, (known = new WeakMap()));
  if (known.has(entry)) return known.get(entry);
  const meaning = meaningOf(vectors, toolMeaningWords(entry));
  known.set(entry, meaning);
  return meaning;
}

/** The meaning vector of a query's words, or undefined when none of them has a vector. */
export function queryMeaning(vectors: WordVectors, queryWords: readonly string[]): Float32Array | undefined {
  return meaningOf(vectors, queryWords.flatMap((w) => words(w)));
}

/** The cosine between two unit vectors. */
export const cosine = (a: Float32Array, b: Float32Array): number => dotAt(a, b, 0);

/** The dot product of `a` with the row of `rows` that starts at `at`. */
function dotAt(a: Float32Array, rows: Float32Array, at: number): number {
  let sum = 0;
  for (let d = 0; d < a.length; d++) sum += a[d]! * rows[at + d]!;
  return sum;
}

/** Scales a vector to unit length in place; false when it is all zeros. */
function toUnitLength(v: Float32Array): boolean {
  const norm = Math.sqrt(dotAt(v, v, 0));
  if (norm === 0) return false;
  for (let d = 0; d < v.length; d++) v[d]! /= norm;
  return true;
}

/** Which server a tool is of, across toolboxes: `toolbox/server`. */
export const serverKey = (entry: FullEntry): string => `${entry.toolbox_name}/${entry.source_server}`;

/** Each index's servers' meanings, per set of vectors (an index is built anew when its catalog changes). */
const indexServerMeanings = new WeakMap<WordVectors, WeakMap<SearchIndex, Map<string, Float32Array>>>();

/**
 * What each server of the indexes is about, by `serverKey`: the unit mean of its tools' meanings (a server none of
 * whose tools has a vector has none). Computed once per index and kept with it.
 */
export function serverMeanings(vectors: WordVectors, indexes: readonly SearchIndex[]): Map<string, Float32Array> {
  let known = indexServerMeanings.get(vectors);
  if (!known) indexServerMeanings.set(vectors, (known = new WeakMap()));
  const out = new Map<string, Float32Array>();
  for (const index of indexes) {
    let servers = known.get(index);
    if (!servers) known.set(index, (servers = meaningsOfServers(vectors, index)));
    for (const [key, meaning] of servers) out.set(key, meaning);
  }
  return out;
}

function meaningsOfServers(vectors: WordVectors, index: SearchIndex): Map<string, Float32Array> {
  const sums = new Map<string, Float32Array>();
  for (const doc of index.docs) {
    const tool = toolMeaning(vectors, doc.entry);
    if (!tool) continue;
    const key = serverKey(doc.entry);
    let sum = sums.get(key);
    if (!sum) sums.set(key, (sum = new Float32Array(vectors.dims)));
    for (let d = 0; d < tool.length; d++) sum[d]! += tool[d]!;
  }
  for (const sum of sums.values()) toUnitLength(sum);
  return sums;
}

/** Every tool's meaning of an index in one array (row i: docs[i]; `known[i]` 0 when it has none), per set of vectors. */
const indexToolMeanings = new WeakMap<WordVectors, WeakMap<SearchIndex, { rows: Float32Array; known: Uint8Array }>>();

function toolMeaningsOf(vectors: WordVectors, index: SearchIndex): { rows: Float32Array; known: Uint8Array } {
  let byIndex = indexToolMeanings.get(vectors);
  if (!byIndex) indexToolMeanings.set(vectors, (byIndex = new WeakMap()));
  let table = byIndex.get(index);
  if (!table) {
    table = { rows: new Float32Array(index.docs.length * vectors.dims), known: new Uint8Array(index.docs.length) };
    for (const [i, doc] of index.docs.entries()) {
      const meaning = toolMeaning(vectors, doc.entry);
      if (!meaning) continue;
      table.rows.set(meaning, i * vectors.dims);
      table.known[i] = 1;
    }
    byIndex.set(index, table);
  }
  return table;
}

/**
 * The cosine between the query's meaning (`queryMeaning`) and every tool of the indexes, in one pass of dot products
 * over each index's tool meanings (kept with the index): position `offset + i` is `indexes[k].docs[i]`, where `offset`
 * counts the tools of the indexes before it; NaN for a tool none of whose words has a vector.
 */
export function closenessAll(vectors: WordVectors, indexes: readonly SearchIndex[], query: Float32Array): Float32Array {
  let total = 0;
  for (const index of indexes) total += index.docs.length;
  const out = new Float32Array(total);
  const dims = vectors.dims;
  let offset = 0;
  for (const index of indexes) {
    const { rows, known } = toolMeaningsOf(vectors, index);
    for (let i = 0; i < known.length; i++) out[offset + i] = known[i] === 0 ? NaN : dotAt(query, rows, i * dims);
    offset += index.docs.length;
  }
  return out;
}

/**
 * The `count` tools nearest the query in meaning, from `closenessAll`'s cosines: at least `min`, best first (ties by
 * name), leaving out positions `taken` marks and what `allowed` refuses.
 */
export function nearestOf(
  indexes: readonly SearchIndex[],
  cosines: Float32Array,
  options: { taken?: Uint8Array; count: number; min: number; allowed: (entry: FullEntry) => boolean },
): { entry: FullEntry; cosine: number; at: number }[] {
  const near: { entry: FullEntry; cosine: number; at: number }[] = [];
  if (options.count <= 0) return near;
  const before = (a: { entry: FullEntry; cosine: number }, b: { entry: FullEntry; cosine: number }): boolean =>
    a.cosine > b.cosine || (a.cosine === b.cosine && a.entry.name < b.entry.name);
  let offset = 0;
  for (const index of indexes) {
    for (let i = 0; i < index.docs.length; i++) {
      const at = offset + i;
      const cosine = cosines[at]!;
      // NaN (no vector) fails the first test too; the second skips what cannot enter a full list.
      if (!(cosine >= options.min) || (near.length === options.count && cosine < near[near.length - 1]!.cosine)) continue;
      if (options.taken?.[at] === 1) continue;
      const entry = index.docs[i]!.entry;
      if (!options.allowed(entry)) continue;
      // Kept sorted and at most `count` long: an insertion, not a sort of every tool near enough.
      const item = { entry, cosine, at };
      let k = near.length;
      while (k > 0 && before(item, near[k - 1]!)) k--;
      if (k >= options.count) continue;
      near.splice(k, 0, item);
      if (near.length > options.count) near.pop();
    }
    offset += index.docs.length;
  }
  return near;
}

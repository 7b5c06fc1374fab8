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

/**
 * What an index's tools and servers are about, per set of vectors, kept with the index (an index is built anew when
 * its catalog changes): every tool's meaning in one array (row i: docs[i]; `known[i]` 0 when it has none), and each
 * server's (`serverKey`) as the unit mean of its tools' meanings, with the server of each row (-1: no meaning).
 */
interface Meanings {
  rows: Float32Array;
  known: Uint8Array;
  servers: { key: string; meaning: Float32Array }[];
  serverOf: Int32Array;
}

const indexMeanings = new WeakMap<WordVectors, WeakMap<SearchIndex, Meanings>>();

function meaningsOf(vectors: WordVectors, index: SearchIndex): Meanings {
  let byIndex = indexMeanings.get(vectors);
  if (!byIndex) indexMeanings.set(vectors, (byIndex = new WeakMap()));
  let table = byIndex.get(index);
  if (table) return table;
  const dims = vectors.dims;
  table = { rows: new Float32Array(index.docs.length * dims), known: new Uint8Array(index.docs.length), servers: [], serverOf: new Int32Array(index.docs.length).fill(-1) };
  const slots = new Map<string, number>();
  for (const [i, doc] of index.docs.entries()) {
    const meaning = toolMeaning(vectors, doc.entry);
    if (!meaning) continue;
    table.rows.set(meaning, i * dims);
    table.known[i] = 1;
    const key = serverKey(doc.entry);
    let slot = slots.get(key);
    if (slot === undefined) {
      slots.set(key, (slot = table.servers.length));
      table.servers.push({ key, meaning: new Float32Array(dims) });
    }
    const sum = table.servers[slot]!.meaning;
    for (let d = 0; d < dims; d++) sum[d]! += meaning[d]!;
  }
  for (const { meaning } of table.servers) toUnitLength(meaning);
  // Every tool of a server with a meaning gets its closeness, even one with no meaning of its own; a server whose
  // tools' meanings cancel out has none, and its rows stay -1.
  for (const [i, doc] of index.docs.entries()) {
    const slot = slots.get(serverKey(doc.entry));
    if (slot !== undefined && table.servers[slot]!.meaning.some((x) => x !== 0)) table.serverOf[i] = slot;
  }
  byIndex.set(index, table);
  return table;
}

/**
 * What each server of the indexes is about, by `serverKey`: the unit mean of its tools' meanings (a server none of
 * whose tools has a vector has none). Computed once per index and kept with it.
 */
export function serverMeanings(vectors: WordVectors, indexes: readonly SearchIndex[]): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const index of indexes) for (const { key, meaning } of meaningsOf(vectors, index).servers) if (meaning.some((x) => x !== 0)) out.set(key, meaning);
  return out;
}

/** Cosines of the query's meaning by position across the indexes (see `closenessAll`); NaN where there is none. */
export interface Closeness {
  /** With each tool's meaning. */
  tools: Float64Array;
  /** With the meaning of each tool's server. */
  servers: Float64Array;
}

/**
 * The cosine between the query's meaning (`queryMeaning`) and every tool of the indexes, and every tool's server, in
 * one pass of dot products over each index's meanings (kept with the index): position `offset + i` is
 * `indexes[k].docs[i]`, where `offset` counts the tools of the indexes before it. A server's cosine is computed once.
 */
export function closenessAll(vectors: WordVectors, indexes: readonly SearchIndex[], query: Float32Array): Closeness {
  let total = 0;
  for (const index of indexes) total += index.docs.length;
  // Doubles, as the dot products are: a cosine kept in single precision could pass a least cosine it is just under.
  const out: Closeness = { tools: new Float64Array(total), servers: new Float64Array(total) };
  const dims = vectors.dims;
  let offset = 0;
  for (const index of indexes) {
    const { rows, known, servers, serverOf } = meaningsOf(vectors, index);
    const server = servers.map(({ meaning }) => dotAt(query, meaning, 0));
    for (let i = 0; i < known.length; i++) {
      out.tools[offset + i] = known[i] === 0 ? NaN : dotAt(query, rows, i * dims);
      out.servers[offset + i] = serverOf[i]! < 0 ? NaN : server[serverOf[i]!]!;
    }
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
  { tools: cosines }: Closeness,
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

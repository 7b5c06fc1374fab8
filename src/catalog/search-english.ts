import { LRUCache } from 'lru-cache';
import { stem } from './search-text.js';
import type { SearchIndex } from './search-index.js';
import { unitVector, type WordVectors } from './word-vectors.js';

/**
 * The English bridge (README "Search"): the shipped general-English word vectors (word-vectors) lead a query word no
 * tool uses to the index's own words nearest it in meaning ("automobile" to `car`).
 */

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
  /** The vectors it was built from (a short answer the domain vectors cannot top up is topped up with them: search). */
  readonly vectors: WordVectors;
}

/**
 * Unit vectors of index words, kept across bridge builds (the most recently used 100,000): a catalog change costs only
 * its new words. An empty vector stands for a word the vectors do not have.
 */
const surfaceVectors = new LRUCache<string, Float32Array>({ max: 100_000 });
const NO_VECTOR = new Float32Array(0);

function surfaceVector(vectors: WordVectors, word: string): Float32Array | undefined {
  let v = surfaceVectors.get(word);
  if (v === undefined) surfaceVectors.set(word, (v = unitVector(vectors, word) ?? NO_VECTOR));
  return v.length > 0 ? v : undefined;
}

/**
 * The English bridge over every index given: one unit vector per index term (the normalised sum of its surface
 * words' vectors), so a query word costs one pass of dot products over the index's terms, never over all English.
 * Answers are remembered per query word (the most recently used 1,000).
 */
export function englishBridge(vectors: WordVectors, indexes: readonly SearchIndex[], params: EnglishParams = DEFAULT_ENGLISH): EnglishBridge {
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

import type { FullEntry } from './catalog-index.js';

/**
 * The shapes of a prepared search index (see search.ts, which builds and ranks with them, and search-bridge.ts, which
 * learns related words from them): kept apart so the two never import each other.
 */

export interface Doc {
  entry: FullEntry;
  /** The name's words joined by `_`, and the name itself lower-cased, for exact-name matches. */
  bare: string;
  names: readonly string[];
  nameTerms: ReadonlySet<string>;
  lengths: Float64Array;
}

/** Per term: the docs it occurs in and, for each, its count in every field (F numbers per doc, flattened). */
export interface Postings {
  docs: number[];
  tf: number[];
}

/** A list of tools prepared for search once; reuse it for as long as the list stays the same. */
export interface SearchIndex {
  docs: Doc[];
  postings: Map<string, Postings>;
  /** Summed field lengths, for the average length that normalises each field. */
  totals: Float64Array;
  /** Every surface word seen (stop words aside), with its stem: for prefix and typo matches. */
  vocabulary: Map<string, string>;
}

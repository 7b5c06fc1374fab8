import { boundedEditDistance } from '../shared/edit-distance.js';
import type { SearchIndex } from './search-index.js';

/**
 * An index's vocabulary arranged for the two scans a query word may need (README "Search"): the words that the last
 * query word begins (it may still be being typed) and the words a typo or two away from a word no tool has. Grouped by
 * their first two letters, a prefix's candidates are one group; grouped by length, with a count of each word's letters,
 * only words whose length and letters are within reach are compared letter by letter. Each part is built on the first
 * query that needs it and kept with the index; both answer in the vocabulary's own order, as a scan of it would.
 */
interface Word {
  surface: string;
  term: string;
  /** Place in the index's vocabulary (its insertion order). */
  order: number;
}

/** Each part is built on the first query that needs it. */
interface Lexicon {
  words: Word[];
  /** The words by their first two letters. */
  byStart?: Map<string, Word[]>;
  byLength?: Map<number, Word[]>;
  /** How many of each letter each word has (32 counts a word, by `order`; char code mod 32: digits fold onto letters). */
  letters?: Uint8Array;
}

const lexicons = new WeakMap<SearchIndex, Lexicon>();

function lexiconOf(index: SearchIndex): Lexicon {
  let lexicon = lexicons.get(index);
  if (!lexicon) {
    const words: Word[] = [];
    for (const [surface, term] of index.vocabulary) if (term) words.push({ surface, term, order: words.length });
    lexicons.set(index, (lexicon = { words }));
  }
  return lexicon;
}

/** Counts a word's letters into 32 places; a count stops at 255 (capped counts still differ by no more than true ones). */
function countLetters(word: string, into: Uint8Array, at: number): void {
  for (let i = 0; i < word.length; i++) {
    const k = at + (word.charCodeAt(i) & 31);
    if (into[k]! < 255) into[k]!++;
  }
}

const byOrder = (a: Word, b: Word): number => a.order - b.order;

/**
 * The index's words longer than `prefix` that begin with it, with their stems, in the vocabulary's order: a scan of
 * the words that share its first two letters (of every word, for a prefix of one letter).
 */
export function wordsBegunBy(index: SearchIndex, prefix: string): Word[] {
  const lexicon = lexiconOf(index);
  if (!lexicon.byStart) {
    lexicon.byStart = new Map();
    for (const w of lexicon.words) {
      const start = w.surface.slice(0, 2);
      const group = lexicon.byStart.get(start);
      if (group) group.push(w);
      else lexicon.byStart.set(start, [w]);
    }
  }
  const out: Word[] = [];
  // A one-letter prefix has no group of its own: every word is a candidate.
  const candidates = prefix.length >= 2 ? (lexicon.byStart.get(prefix.slice(0, 2)) ?? []) : lexicon.words;
  for (const w of candidates) if (w.surface.length > prefix.length && w.surface.startsWith(prefix)) out.push(w);
  return out;
}

/**
 * The index's words within `max` edits of `word` (optimal string alignment: a swap of neighbours is one edit), in the
 * vocabulary's order. An edit changes the count of letters by at most two (a substitution) and a swap not at all, so a
 * word whose letter counts differ from `word`'s by more than `2 × max` is out without being compared.
 */
export function wordsNear(index: SearchIndex, word: string, max: number): Word[] {
  const lexicon = lexiconOf(index);
  if (!lexicon.byLength || !lexicon.letters) {
    lexicon.byLength = new Map();
    lexicon.letters = new Uint8Array(lexicon.words.length * 32);
    for (const w of lexicon.words) {
      const group = lexicon.byLength.get(w.surface.length);
      if (group) group.push(w);
      else lexicon.byLength.set(w.surface.length, [w]);
      countLetters(w.surface, lexicon.letters, w.order * 32);
    }
  }
  const { byLength, letters } = lexicon;
  const own = new Uint8Array(32);
  countLetters(word, own, 0);
  const out: Word[] = [];
  for (let length = word.length - max; length <= word.length + max; length++) {
    for (const candidate of byLength.get(length) ?? []) {
      const at = candidate.order * 32;
      let differ = 0;
      for (let c = 0; c < 32 && differ <= 2 * max; c++) differ += Math.abs(own[c]! - letters[at + c]!);
      if (differ <= 2 * max && boundedEditDistance(word, candidate.surface, max) <= max) out.push(candidate);
    }
  }
  return out.sort(byOrder);
}

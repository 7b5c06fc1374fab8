import { LRUCache } from 'lru-cache';
import { stemmer } from 'stemmer';

/**
 * Text analysis for tool search (README: "Search"): words split out of identifiers, English stop words dropped,
 * Porter stems from the `stemmer` package, so "screenshots", "screenshotting" and "screenshot" meet.
 */

/**
 * Function words of English that say nothing about what a tool does. General English only: no word here is aimed
 * at a server or a query, and verbs such as "get", "set" and "list" stay, since tool names are made of them.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or ' +
    'other our ours ourselves out over own please same she should so some such than that the their theirs them themselves ' +
    'then there these they this those through to too under until up very via was we were what when where which while who ' +
    'whom why will with would you your yours yourself yourselves'
  ).split(' '),
);

/**
 * Lower-case words of a text, with identifiers split into their parts: camelCase and PascalCase (acronyms kept
 * whole: `HTTPServer` → http, server), snake_case, kebab-case, dotted names, and letters from digits (`v2` → v, 2).
 * Letters are ASCII: other characters separate words. One pass over the text, since every tool text goes through it.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  let prev = 0; // 0 other, 1 lower, 2 upper, 3 digit
  let upper = false; // whether the word being read has a capital (else it needs no lower-casing)
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    const kind = c >= 97 && c <= 122 ? 1 : c >= 65 && c <= 90 ? 2 : c >= 48 && c <= 57 ? 3 : 0;
    let cut = kind === 0 || (prev !== 0 && ((prev === 3) !== (kind === 3) || (prev === 1 && kind === 2)));
    // "HTTPServer": an upper-case letter followed by a lower-case one starts a word inside a run of capitals.
    let at = i;
    if (!cut && prev === 2 && kind === 1 && start >= 0 && i - 1 > start) {
      cut = true;
      at = i - 1;
    }
    if (cut && start >= 0) {
      if (at > start) out.push(upper ? text.slice(start, at).toLowerCase() : text.slice(start, at));
      start = kind === 0 ? -1 : at;
      upper = at < i; // the capital that starts the next word was read already
    } else if (start < 0 && kind !== 0) start = i;
    if (kind === 2) upper = true;
    prev = kind;
  }
  return out;
}

/** The Porter stem of a lower-case word (`creating`, `creates` → `creat`; `entities` → `entiti`). */
export function stem(word: string): string {
  if (word.length <= 2) return word;
  let s = stems.get(word);
  if (s === undefined) stems.set(word, (s = stemmer(word)));
  return s;
}

/**
 * A memo of a pure function, bounded to the most recently used words: catalogs share most of their words, so an index
 * rebuilt after a catalog change stems almost nothing anew, and a workbench left running keeps the words in use.
 */
const stems = new LRUCache<string, string>({ max: 50_000 });

/** The stems of a text's words that are not stop words, in order, repeats kept. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (!STOP_WORDS.has(w)) out.push(stem(w));
  return out;
}

/**
 * A text's words that are not stop words and their stems, as word numbers (see {@link wordId}) in pairs, position by
 * position: a surface word's, then its stem's. One typed array, so an index build counts them in arrays, not maps.
 */
export type Analyzed = Int32Array;

/** Every word and stem analysed so far, numbered from 0 (the numbers stay valid until forgetWordsIfMany). */
const wordIds = new Map<string, number>();
const wordsById: string[] = [];
/** Per word number: the number of its stem, once known (a word's stem never changes). */
const stemIds: number[] = [];

/** The number of a word or stem: the same string always gets the same number. */
export function wordId(word: string): number {
  let id = wordIds.get(word);
  if (id === undefined) {
    wordIds.set(word, (id = wordIds.size));
    wordsById.push(word);
  }
  return id;
}

/** The word or stem a number stands for. */
export function wordOf(id: number): string {
  return wordsById[id]!;
}

/** How many word numbers there are (each is below this). */
export function wordCount(): number {
  return wordIds.size;
}

const MAX_WORDS = 200_000;

/**
 * Forgets every word number (and the analysed texts holding them) when there are very many: call it only between
 * index builds, never during one, since a build counts by these numbers. Word numbers are not an LRU: a number must
 * not be given to another word while an analysed text or an index build still holds it, so they go all at once.
 */
export function forgetWordsIfMany(): void {
  if (wordIds.size < MAX_WORDS) return;
  wordIds.clear();
  wordsById.length = 0;
  stemIds.length = 0;
  analyzed.clear();
}

/** Analysed texts, the most recently used kept. */
const analyzed = new LRUCache<string, Analyzed>({ max: 20_000 });

/**
 * {@link terms} with the surface words kept, memoised (bounded, least recently used forgotten first): when a catalog
 * changes, most of its tools' texts are the same strings as before, so rebuilding its index re-reads almost nothing —
 * the index is incremental in cost.
 */
export function analyze(text: string): Analyzed {
  let a = analyzed.get(text);
  if (a === undefined) {
    const all = words(text);
    let n = 0;
    for (const w of all) if (!STOP_WORDS.has(w)) all[n++] = w;
    a = new Int32Array(2 * n);
    for (let i = 0; i < n; i++) {
      const id = wordId(all[i]!);
      a[2 * i] = id;
      a[2 * i + 1] = stemIds[id] ??= wordId(stem(all[i]!));
    }
    analyzed.set(text, a);
  }
  return a;
}

/** The ranking of open_toolbox search before issue 22 (a BM25-like score without length normalisation), kept as a baseline for the search benchmark. */
import type { FullEntry } from '../../src/catalog/catalog-index.js';

/** Default and largest number of matches a search returns (README: "Search"). */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;

/**
 * Field weights: a word in the tool's name says most about what it does; its title next; its parameters' names tell
 * what it works on; prose descriptions are long and say many things.
 */
const WEIGHTS = { name: 4, title: 3, parameter: 2, server: 1, description: 1, parameterDescription: 0.5 } as const;

const STOP_WORDS = new Set(
  'a an and are as at be by can do for from get how i in into is it its me my of on or set that the this to use using via what when which with you your'.split(' '),
);

/** One tool's weighted term frequencies. */
interface Doc {
  entry: FullEntry;
  terms: Map<string, number>;
  /** The stemmed words of the tool's own name, for the all-words-in-the-name bonus. */
  nameTerms: Set<string>;
  bare: string;
}

/** A list of tools prepared for search once; reuse it for as long as the list stays the same. */
export interface SearchIndex {
  docs: Doc[];
  /** In how many docs each term occurs. */
  df: Map<string, number>;
}

const built = new WeakMap<readonly FullEntry[], SearchIndex>();

/** The search index of a list of tools, built once per list object. */
export function searchIndex(entries: readonly FullEntry[]): SearchIndex {
  let index = built.get(entries);
  if (!index) {
    const docs = entries.map(toDoc);
    const df = new Map<string, number>();
    for (const doc of docs) for (const term of doc.terms.keys()) df.set(term, (df.get(term) ?? 0) + 1);
    index = { docs, df };
    built.set(entries, index);
  }
  return index;
}

/**
 * The best `limit` matches of `query` across the given indexes, best first: a BM25-like lexical score over name
 * parts (snake, kebab, camel and dotted names are split), title, description, and parameter names and descriptions,
 * with light stemming, plus a bonus when every query word is in the tool's name. Ties go to the shorter name, then to code-point
 * order, so the same query over the same tools always answers the same. Tools that match no query word are left out.
 */
function searchTools(indexes: readonly SearchIndex[], query: string, limit: number): FullEntry[] {
  const wanted = [...new Set(termsOf(query))];
  const queryBare = words(query).join('_');
  if (wanted.length === 0) return [];
  const total = indexes.reduce((n, i) => n + i.docs.length, 0);
  const idf = new Map<string, number>();
  for (const term of wanted) {
    const df = indexes.reduce((n, i) => n + (i.df.get(term) ?? 0), 0);
    idf.set(term, Math.log(1 + (total - df + 0.5) / (df + 0.5)));
  }
  const scored: { entry: FullEntry; score: number }[] = [];
  for (const index of indexes) {
    for (const doc of index.docs) {
      let score = 0;
      let inName = 0;
      for (const term of wanted) {
        const tf = doc.terms.get(term);
        if (tf === undefined) continue;
        score += idf.get(term)! * ((tf * 2.2) / (tf + 1.2));
        if (doc.nameTerms.has(term)) inName++;
      }
      if (score === 0) continue;
      if (inName === wanted.length) score *= 1.5;
      // A query that names most of what the tool's name says is about that tool (delete_relations for "delete relations").
      score *= 1 + (0.5 * coveredName(doc.nameTerms, wanted)) / Math.max(1, doc.nameTerms.size);
      if (doc.bare === queryBare) score *= 2;
      scored.push({ entry: doc.entry, score });
    }
  }
  // Equal scores: the plainer (shorter) name first, then code-point order.
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      a.entry.original_name.length - b.entry.original_name.length ||
      (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0),
  );
  return scored.slice(0, limit).map((s) => s.entry);
}

function coveredName(nameTerms: Set<string>, terms: readonly string[]): number {
  let n = 0;
  for (const t of terms) if (nameTerms.has(t)) n++;
  return n;
}

/** A few everyday words mapped to the word tool names use, on both sides, so "make a folder" meets create_directory. */
const SYNONYMS: Record<string, string> = {
  make: 'create',
  remove: 'delete',
  erase: 'delete',
  find: 'search',
  lookup: 'search',
  fetch: 'get',
  retrieve: 'get',
  several: 'multiple',
  many: 'multiple',
  folder: 'directory',
  folders: 'directories',
  dir: 'directory',
};

function termsOf(text: string): string[] {
  return words(text)
    .map((w) => stem(SYNONYMS[w] ?? w))
    .filter((t) => !STOP_WORDS.has(t));
}

function toDoc(entry: FullEntry): Doc {
  const terms = new Map<string, number>();
  const add = (text: string | undefined, weight: number): string[] => {
    const stems = termsOf(text ?? '');
    for (const term of stems) terms.set(term, (terms.get(term) ?? 0) + weight);
    return stems;
  };
  const nameTerms = new Set(add(entry.original_name, WEIGHTS.name));
  add(entry.title ?? entry.annotations?.title, WEIGHTS.title);
  add(entry.source_server, WEIGHTS.server);
  add(entry.description.replace(/^\[[^\]]*\]\s*/, ''), WEIGHTS.description);
  const properties = (entry.inputSchema.properties ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(properties)) {
    add(key, WEIGHTS.parameter);
    const description = (value as { description?: unknown } | null)?.description;
    if (typeof description === 'string') add(description, WEIGHTS.parameterDescription);
  }
  return { entry, terms, nameTerms, bare: words(entry.original_name).join('_') };
}

/** Lower-case words of a text, with camelCase, snake_case, kebab-case and dotted names split into their parts. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** Light stemming: plural and -ing/-ed endings, so "screenshots", "screenshot" and "screenshotting" meet. */
export function stem(word: string): string {
  const base = suffixless(word);
  // A final "e" goes too, so "create", "created" and "creating" all become "creat".
  return base.length > 3 && base.endsWith('e') ? base.slice(0, -1) : base;
}

function suffixless(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (/(?:ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return undouble(word.slice(0, -2));
  return word;
}

function undouble(word: string): string {
  return /([^aeiouls])\1$/.test(word) ? word.slice(0, -1) : word;
}

export const previousRanker = {
  name: 'before issue 22',
  prepare: (entries: readonly FullEntry[]): SearchIndex => searchIndex(entries),
  rank: (indexes: readonly SearchIndex[], query: string, limit: number): FullEntry[] => searchTools(indexes, query, limit),
};

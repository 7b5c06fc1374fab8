import type { FullEntry } from './catalog-index.js';
import { parseQuery, type ParsedQuery } from './search-query.js';
import { terms } from './search-text.js';
import { wordsBegunBy, wordsNear } from './search-lexicon.js';
import type { Bridge } from './search-bridge.js';
import { fieldCount, FIELD_PLACE, type Doc, type SearchIndex } from './search-index.js';
import { closenessAll, nearestOf, queryMeaning } from './search-meaning.js';
import type { WordVectors } from './word-vectors.js';
import { DEFAULT_PARAMS, FIELDS, type RankingParams } from './search-params.js';

export type { SearchIndex, SearchContext } from './search-index.js';
export { searchIndex } from './search-index.js';

export { stem, words } from './search-text.js';
export { DEFAULT_PARAMS, FIELDS, type Field, type RankingParams } from './search-params.js';

/** How to search: ranking figures, and the vocabulary bridge of every catalog known (see search-bridge). */
export interface SearchOptions {
  params?: RankingParams;
  bridge?: Bridge;
}

/** Default and largest number of matches a search returns (README: "Search"). */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;

const F = FIELDS.length;

/**
 * One query word's alternatives: index terms with the weight a match on each counts for; `asWritten` for the word's
 * own term and words it begins (not related words or near spellings).
 */
type Slot = { term: string; weight: number; asWritten?: true }[];

/**
 * The best `limit` matches of `query` across the given indexes, best first (README: "Search"). Ranking is BM25F over
 * the tool's fields with per-field length normalisation, plus a factor for how much of the tool's name the query
 * names; a tool whose name the query spells exactly (bare, canonical, or in quotes) comes first. The last query word
 * also matches words it begins (a word still being typed), and a word no tool has matches words a typo or two away.
 * `server:NAME` and `toolbox:NAME` (globs allowed) narrow the search. Ties go to the shorter name, then to code-point
 * order, so the same query over the same tools always answers the same. Tools that match no query word are left out,
 * unless the answer is short: then `topUp` adds the tools nearest the query in meaning.
 */
export function searchTools(indexes: readonly SearchIndex[], query: string, limit: number, options: SearchOptions = {}): FullEntry[] {
  const parsed = parseQuery(query);
  return topUp(indexes, parsed, rankTools(indexes, parsed, options), limit, options).map((s) => s.entry);
}

/**
 * The first `limit` of a ranking, topped up when it has fewer (README "Search", "Topped up by meaning"): the tools
 * nearest the query in meaning follow the word matches, marked `byMeaning` (and `loose`) — by the domain vectors, or,
 * when those find no tool near enough (a query in words tool texts rarely use: "schedule" for a tool that books
 * visits), by the English bridge's general-English vectors. Nothing is added without vectors, for a query of
 * qualifiers alone, or below `meaningMin` (domain) / `englishMeaningMin` (English).
 */
export function topUp(indexes: readonly SearchIndex[], parsed: ParsedQuery, ranked: readonly Scored[], limit: number, options: SearchOptions = {}): Scored[] {
  const shown = ranked.slice(0, limit);
  const params = options.params ?? DEFAULT_PARAMS;
  if (shown.length >= limit || parsed.words.length === 0) return shown;
  const nearest = (vectors: WordVectors | undefined, min: number): { entry: FullEntry; at: number }[] => {
    const query = vectors && min <= 1 ? queryMeaning(vectors, parsed.words) : undefined;
    if (!vectors || !query) return [];
    const taken = new Set(shown.map((s) => s.entry));
    return nearestOf(indexes, closenessAll(vectors, indexes, query), {
      count: limit - shown.length,
      min,
      allowed: (entry) => !taken.has(entry) && allowed(entry, parsed),
    });
  };
  let near = nearest(options.bridge?.meaning, params.meaningMin);
  if (near.length === 0) near = nearest(options.bridge?.english?.vectors, params.englishMeaningMin);
  return [...shown, ...near.map(({ entry, at }): Scored => ({ entry, score: 0, loose: true, byMeaning: true, at }))];
}

/** What a tool whose name the query spells exactly gets on top of its score: it comes first. */
export const EXACT_NAME = 1e6;

export interface Scored {
  entry: FullEntry;
  score: number;
  /** Set by the word ranking when no query word matched the tool as written, only related words or near spellings. */
  loose?: true;
  /** Set for a tool that matched no query word at all, only came near the query in meaning (see `topUp`, `withMeaning`). */
  byMeaning?: true;
  /**
   * Where the tool is among the searched indexes' tools, counted across them in order (`closenessAll`'s positions):
   * set by the ranking, so the meaning pass reads a tool's cosine without looking it up.
   */
  at?: number;
}

/** Every tool that matches, scored and sorted best first. */
export function rankTools(indexes: readonly SearchIndex[], parsed: ParsedQuery, options: SearchOptions = {}): Scored[] {
  const params = options.params ?? DEFAULT_PARAMS;
  const stats = statsOf(indexes);
  if (onlyQualifiers(parsed)) return qualifiedTools(indexes, parsed);
  const slots = parsed.words.map((w, i) => slotOf(indexes, w, i === parsed.words.length - 1 && parsed.openEnded, params, options.bridge));
  let scores = scoreSlots(indexes, stats, slots.filter((s) => s.length > 0), params, parsed);
  if (params.feedbackWeight > 0 && scores.length > 0) {
    const extra = feedbackSlots(indexes, stats, scores, slots, params);
    if (extra.length > 0) scores = scoreSlots(indexes, stats, [...slots.filter((s) => s.length > 0), ...extra], params, parsed);
  }
  if (options.bridge?.meaning && (params.meaningWeight > 0 || params.serverMeaningWeight > 0)) {
    const floor = (): number => (params.wordScoreFloor > 0 ? params.wordScoreFloor * idfSum(indexes, stats, parsed) : 0);
    withMeaning(options.bridge.meaning, indexes, parsed, scores, params, floor);
  }
  if (parsed.exactNames.length > 0) withExactNames(indexes, parsed, scores);
  return scores.sort(byScore);
}

/**
 * A tool whose name the query spells exactly (bare, canonical, or in quotes) comes first, even when no other word of
 * the query matched it. Each index's names are looked up, not scanned (`namesOf`).
 */
function withExactNames(indexes: readonly SearchIndex[], parsed: ParsedQuery, scores: Scored[]): void {
  const named = new Map<FullEntry, number>();
  let offset = 0;
  for (const index of indexes) {
    const names = namesOf(index);
    for (const name of parsed.exactNames) for (const i of names.get(name) ?? []) if (!named.has(index.docs[i]!.entry)) named.set(index.docs[i]!.entry, offset + i);
    offset += index.docs.length;
  }
  if (named.size === 0) return;
  const have = new Set(scores.map((s) => s.entry));
  for (const [entry, at] of [...named].sort((a, b) => a[1] - b[1])) if (!have.has(entry) && allowed(entry, parsed)) scores.push({ entry, score: 0, at });
  for (const s of scores) if (named.has(s.entry)) s.score += EXACT_NAME;
}

/** Each index's tools by the names a query may spell exactly: the name lower-cased, the canonical name, the bare words. */
const indexNames = new WeakMap<SearchIndex, Map<string, number[]>>();

function namesOf(index: SearchIndex): Map<string, number[]> {
  let names = indexNames.get(index);
  if (names) return names;
  names = new Map();
  for (const [i, doc] of index.docs.entries()) {
    for (const name of new Set([...doc.names, doc.bare])) {
      const list = names.get(name);
      if (list) list.push(i);
      else names.set(name, [i]);
    }
  }
  indexNames.set(index, names);
  return names;
}

/**
 * Words and meaning together (README "Search", "Meaning"): each matching tool's score becomes its word score over the
 * best one's, or over the floor when that is larger (so 1 at most; README "Weak word matches"), plus `meaningWeight`
 * times the cosine between the query's meaning and the tool's, plus `serverMeaningWeight` times the cosine between the
 * query's meaning and its server's. Meaning reorders the tools that match a word, so among tools that share the
 * query's incidental words ("open", "show") the one whose job the query describes comes first, and across servers, a
 * tool of the server the query is about; and a few tools that match no word but are near in meaning
 * (`meaningCandidates`) compete by meaning alone, marked `byMeaning`.
 */
function withMeaning(vectors: WordVectors, indexes: readonly SearchIndex[], parsed: ParsedQuery, scores: Scored[], params: RankingParams, floor: () => number): void {
  const query = queryMeaning(vectors, parsed.words);
  if (!query || scores.length === 0) return;
  let best = 0;
  for (const s of scores) best = Math.max(best, s.score);
  if (!(best > 0)) return;
  // Out of the best match's score, or of the floor when even the best match is weak: meaning then counts for more.
  best = Math.max(best, floor());
  // Every tool's cosine and its server's in one pass: the matching tools' and the candidates'.
  const closeness = closenessAll(vectors, indexes, query);
  if (params.meaningCandidates > 0) {
    const taken = new Uint8Array(closeness.tools.length);
    for (const s of scores) if (s.at !== undefined) taken[s.at] = 1;
    const near = nearestOf(indexes, closeness, {
      taken,
      count: params.meaningCandidates,
      min: params.meaningCandidateMin,
      allowed: (entry) => allowed(entry, parsed),
    });
    for (const { entry, at } of near) scores.push({ entry, score: 0, loose: true, byMeaning: true, at });
  }
  const of = (cosines: Float64Array, at: number | undefined, weight: number): number => {
    const c = at === undefined || weight === 0 ? NaN : cosines[at]!;
    return Number.isNaN(c) ? 0 : weight * c;
  };
  for (const s of scores) {
    s.score = s.score / best + of(closeness.tools, s.at, params.meaningWeight) + of(closeness.servers, s.at, params.serverMeaningWeight);
  }
}

/**
 * The scale `wordScoreFloor` is a share of: the sum of the query words' idf, a word no tool has counted as the rarest
 * (in one tool), since the query then says something the tools' words do not. A word's own match scores less than its
 * idf (BM25 saturates), so a tool matching few of the words, or only in its description, stays under the floor.
 */
function idfSum(indexes: readonly SearchIndex[], stats: Stats, parsed: ParsedQuery): number {
  let sum = 0;
  for (const word of parsed.words) {
    const term = terms(word)[0];
    if (term === undefined) continue;
    const d = Math.max(1, df(indexes, term));
    sum += idf(stats, d);
  }
  return sum;
}

/** Whether a query has qualifiers and nothing else to search by (no word, or only words like "the"). */
export function onlyQualifiers(parsed: ParsedQuery): boolean {
  return parsed.qualifiers.length > 0 && parsed.words.every((w) => terms(w).length === 0);
}

/** A query of qualifiers alone (`server:memory`): the tools they keep, in catalog order. */
function qualifiedTools(indexes: readonly SearchIndex[], parsed: ParsedQuery): Scored[] {
  const out: Scored[] = [];
  for (const index of indexes) for (const doc of index.docs) if (allowed(doc.entry, parsed)) out.push({ entry: doc.entry, score: -out.length });
  return out;
}

/** Best score first; ties to the shorter name, then code-point order, so the same query always answers the same. */
export function byScore(a: Scored, b: Scored): number {
  return (
    b.score - a.score ||
    a.entry.original_name.length - b.entry.original_name.length ||
    (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0)
  );
}

interface Stats {
  n: number;
  avg: Float64Array;
}

function statsOf(indexes: readonly SearchIndex[]): Stats {
  let n = 0;
  const avg = new Float64Array(F);
  for (const index of indexes) {
    n += index.docs.length;
    for (let f = 0; f < F; f++) avg[f]! += index.totals[f]!;
  }
  for (let f = 0; f < F; f++) avg[f] = n > 0 ? Math.max(avg[f]! / n, 1e-9) : 1;
  return { n, avg };
}

/** BM25's idf of a term in `d` of the searched tools. */
const idf = (stats: Stats, d: number): number => Math.log(1 + (stats.n - d + 0.5) / (d + 0.5));

function df(indexes: readonly SearchIndex[], term: string): number {
  let d = 0;
  for (const index of indexes) {
    const t = index.postings.get(term);
    if (t !== undefined) d += index.starts[t + 1]! - index.starts[t]!;
  }
  return d;
}

/** A query word's alternatives: its own stem, words it begins when it is the last word, near spellings when unknown. */
function slotOf(indexes: readonly SearchIndex[], word: string, openEnded: boolean, params: RankingParams, bridge: Bridge | undefined): Slot {
  const own = terms(word);
  if (own.length === 0) return [];
  const term = own[0]!;
  const slot: Slot = [];
  const known = df(indexes, term) > 0;
  if (known) slot.push({ term, weight: 1, asWritten: true });
  const seen = new Set(slot.map((s) => s.term));
  if (bridge && params.bridgeWeight > 0) addRelated(indexes, slot, seen, bridge.related.get(term), params.bridgeWeight);
  if (bridge?.english && params.englishWeight > 0 && df(indexes, term) <= params.englishMaxDf) {
    addRelated(indexes, slot, seen, bridge.english.near(word), params.englishWeight);
  }
  if (openEnded && word.length >= 2) {
    for (const index of indexes) {
      for (const { term: t } of wordsBegunBy(index, word)) {
        if (seen.has(t)) continue;
        seen.add(t);
        slot.push({ term: t, weight: params.prefixWeight, asWritten: true });
      }
    }
  }
  if (!known && word.length >= 4) {
    const max = word.length >= 8 ? 2 : 1;
    for (const index of indexes) {
      for (const { term: t } of wordsNear(index, word, max)) {
        if (seen.has(t)) continue;
        seen.add(t);
        slot.push({ term: t, weight: params.typoWeight });
      }
    }
  }
  return slot;
}

/** Adds to a slot the related terms some tool has and the slot has not, at `weight` times their strength. */
function addRelated(indexes: readonly SearchIndex[], slot: Slot, seen: Set<string>, related: readonly { term: string; strength: number }[] | undefined, weight: number): void {
  for (const r of related ?? []) {
    if (seen.has(r.term) || df(indexes, r.term) === 0) continue;
    seen.add(r.term);
    slot.push({ term: r.term, weight: weight * r.strength });
  }
}

/** Whether a tool passes the query's `server:` and `toolbox:` qualifiers. */
export function allowed(entry: FullEntry, parsed: ParsedQuery): boolean {
  return (!parsed.server || parsed.server(entry.source_server)) && (!parsed.toolbox || parsed.toolbox(entry.toolbox_name));
}

/** BM25F: per slot, the best of its alternatives; per alternative, idf × saturated weighted, normalised term count. */
function scoreSlots(indexes: readonly SearchIndex[], stats: Stats, slots: readonly Slot[], params: RankingParams, parsed: ParsedQuery): Scored[] {
  const { weights, b, k1 } = params;
  const w = FIELDS.map((f) => weights[f]);
  const bf = FIELDS.map((f) => b[f]);
  const out: Scored[] = [];
  let offset = 0;
  const base = new Map<number, { score: number; inName: number; asWritten: boolean; doc: Doc }>();
  for (const index of indexes) {
    for (const slot of slots) {
      const best = new Map<number, { score: number; inName: boolean; asWritten: boolean }>();
      for (const { term, weight, asWritten = false } of slot) {
        const t = index.postings.get(term);
        if (t === undefined) continue;
        const d = df(indexes, term);
        const rarity = idf(stats, d);
        const { postingDocs, postingTf } = index;
        for (let i = index.starts[t]!, end = index.starts[t + 1]!; i < end; i++) {
          const id = postingDocs[i]!;
          const doc = index.docs[id]!;
          let tf = 0;
          // The packed counts, field by field (see Postings), until no field is left.
          for (let f = 0, x = postingTf[i]!; x > 0; f++) {
            const c = x % FIELD_PLACE[1]!;
            x = (x - c) / FIELD_PLACE[1]!;
            if (c > 0) tf += (w[f]! * c) / (1 - bf[f]! + (bf[f]! * doc.lengths[f]!) / stats.avg[f]!);
          }
          const s = weight * rarity * (tf / (k1 + tf));
          const inName = weight === 1 && fieldCount(postingTf[i]!, 0) > 0;
          const prev = best.get(id);
          if (!prev) best.set(id, { score: s, inName, asWritten });
          else {
            prev.asWritten ||= asWritten;
            if (s > prev.score) Object.assign(prev, { score: s, inName });
          }
        }
      }
      for (const [id, { score, inName, asWritten }] of best) {
        const key = offset + id;
        const acc = base.get(key);
        if (acc) {
          acc.score += score;
          if (inName) acc.inName++;
          acc.asWritten ||= asWritten;
        } else base.set(key, { score, inName: inName ? 1 : 0, asWritten, doc: index.docs[id]! });
      }
    }
    offset += index.docs.length;
  }
  // Every term the query reaches (as written, by prefix, typo or bridge): a destructive tool's action named by any.
  const named = new Set(slots.flatMap((slot) => slot.map((alternative) => alternative.term)));
  for (const [at, { score, inName, asWritten, doc }] of base) {
    if (!allowed(doc.entry, parsed)) continue;
    // A query that names most of what the tool's name says is about that tool (delete_relations for "delete relations").
    const coverage = doc.nameTerms.size > 0 ? Math.min(1, inName / doc.nameTerms.size) : 0;
    const unnamed = doc.action !== undefined && !named.has(doc.action) ? params.destructiveUnnamed : 1;
    const scored: Scored = { entry: doc.entry, score: score * (1 + params.nameCoverage * coverage) * unnamed, at };
    if (!asWritten) scored.loose = true;
    out.push(scored);
  }
  return out;
}

/** Pseudo-relevance feedback: the strongest name and title terms of the first pass's best tools, as extra slots. */
function feedbackSlots(indexes: readonly SearchIndex[], stats: Stats, first: Scored[], slots: readonly Slot[], params: RankingParams): Slot[] {
  const top = [...first].sort((a, b) => b.score - a.score).slice(0, params.feedbackDocs);
  const have = new Set(slots.flatMap((s) => s.map((a) => a.term)));
  const weight = new Map<string, number>();
  const topSet = new Set(top.map((s) => s.entry));
  for (const index of indexes) {
    for (const [term, t] of index.postings) {
      if (have.has(term)) continue;
      const from = index.starts[t]!;
      const to = index.starts[t + 1]!;
      const d = to - from;
      for (let i = from; i < to; i++) {
        if (!topSet.has(index.docs[index.postingDocs[i]!]!.entry)) continue;
        // Name, title or first sentence.
        const inName = index.postingTf[i]! % FIELD_PLACE[3]!;
        if (inName > 0) weight.set(term, (weight.get(term) ?? 0) + Math.log(1 + stats.n / d));
      }
    }
  }
  return [...weight.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, params.feedbackTerms)
    .map(([term]) => [{ term, weight: params.feedbackWeight }]);
}

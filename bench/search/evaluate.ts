import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { searchIndex, searchTools, type SearchIndex, DEFAULT_PARAMS, type RankingParams } from '../../src/catalog/search.js';
import type { Ranker } from './baselines.js';
import { buildBridge, DEFAULT_BRIDGE, type BridgeParams } from '../../src/catalog/search-bridge.js';
import { corpusEntries, type CorpusFile } from './corpus.js';

const corpusEntriesOf = (files: readonly CorpusFile[]): FullEntry[][] => [...corpusEntries(files).values()];
import type { BenchQuery } from './queries.js';

/** Depth of the ranking MRR looks at: a right tool below it counts as not found. */
const DEPTH = 20;

export interface Metrics {
  queries: number;
  hit1: number;
  hit5: number;
  mrr: number;
}

export interface QueryResult {
  query: BenchQuery;
  /** 1-based rank of the first right tool, or 0 when not in the first DEPTH. */
  scoped: number;
  global: number;
  /** What came first. */
  scopedTop: string[];
  globalTop: string[];
}

/** The workbench's own ranking as a benchmark ranker, with the server descriptions as its context. */
export function workbenchRanker(
  files: readonly CorpusFile[],
  params: RankingParams = DEFAULT_PARAMS,
  name = 'workbench BM25F',
  bridgeParams: BridgeParams = DEFAULT_BRIDGE,
): Ranker<SearchIndex> {
  const servers = new Map(files.map((f) => [`${f.server}/${f.server}`, f.description]));
  // The bridge of a workbench that has seen every catalog of the corpus (built from all of them, as open_toolbox does).
  const bridge = buildBridge(corpusEntriesOf(files).map((entries) => searchIndex(entries, { servers })), bridgeParams);
  return {
    name,
    prepare: (entries) => searchIndex(entries, { servers }),
    rank: (indexes, query, limit) => searchTools(indexes, query, limit, { params, bridge }),
  };
}

function rankOf(list: readonly FullEntry[], right: (e: FullEntry) => boolean): number {
  const i = list.findIndex(right);
  return i < 0 ? 0 : i + 1;
}

/** Runs every query scoped (its server's toolbox alone) and global (every toolbox), recording the rank of the right tool. */
export function runQueries<I>(ranker: Ranker<I>, toolboxes: ReadonlyMap<string, FullEntry[]>, queries: readonly BenchQuery[]): QueryResult[] {
  const prepared = new Map([...toolboxes].map(([name, entries]) => [name, ranker.prepare(entries)]));
  const all = [...prepared.values()];
  return queries.map((query) => {
    const own = (e: FullEntry): boolean => e.source_server === query.server && query.tools.includes(e.original_name);
    const also = new Set(query.also);
    const anywhere = (e: FullEntry): boolean => own(e) || also.has(`${e.source_server}:${e.original_name}`);
    const scopedList = ranker.rank([prepared.get(query.server)!], query.query, DEPTH);
    const globalList = ranker.rank(all, query.query, DEPTH);
    return {
      query,
      scoped: rankOf(scopedList, own),
      global: rankOf(globalList, anywhere),
      scopedTop: scopedList.slice(0, 3).map((e) => e.original_name),
      globalTop: globalList.slice(0, 3).map((e) => `${e.source_server}:${e.original_name}`),
    };
  });
}

export function metricsOf(results: readonly QueryResult[], which: 'scoped' | 'global'): Metrics {
  return metricsOfRanks(results.map((r) => r[which]));
}

/**
 * Ranks of the first right tool when each query searches its server's group (bench/search/groups.ts): one toolbox of
 * several servers of one kind. A right tool is the query's own or an equivalent tool of another server of the group.
 */
export function runGrouped<I>(ranker: Ranker<I>, groups: ReadonlyMap<string, FullEntry[]>, groupOf: ReadonlyMap<string, string>, queries: readonly BenchQuery[]): number[] {
  const prepared = new Map([...groups].map(([name, entries]) => [name, ranker.prepare(entries)]));
  return queries.map((query) => {
    const also = new Set(query.also);
    const right = (e: FullEntry): boolean => (e.source_server === query.server && query.tools.includes(e.original_name)) || also.has(`${e.source_server}:${e.original_name}`);
    return rankOf(ranker.rank([prepared.get(groupOf.get(query.server)!)!], query.query, DEPTH), right);
  });
}

/** hit@1, hit@5 and MRR of a list of ranks (0: not found). */
export function metricsOfRanks(ranks: readonly number[]): Metrics {
  const n = Math.max(1, ranks.length);
  return {
    queries: ranks.length,
    hit1: ranks.filter((r) => r === 1).length / n,
    hit5: ranks.filter((r) => r >= 1 && r <= 5).length / n,
    mrr: ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n,
  };
}

/**
 * The search benchmark's measurements (README "Search"), as data: quality rows of every ranker over the frozen corpus
 * (tuning, held-out and blind queries apart), the tuning queries the workbench misses, and index and search speed over 1,000
 * tools. `npm run bench:search` prints them; `npm run bench` puts them in BENCHMARKS.md (bench/phases/search.ts).
 */
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { DEFAULT_PARAMS, searchIndex, searchTools } from '../../src/catalog/search.js';
import { formatToolName } from '../../src/catalog/names.js';
import { buildBridge } from '../../src/catalog/search-bridge.js';
import { shippedVectors } from '../../src/catalog/word-vectors.js';
import { miniSearch, plainBm25, type Ranker } from './baselines.js';
import { corpusEntries, loadCorpus } from './corpus.js';
import { embeddingsRanker } from './embeddings.js';
import { metricsOf, metricsOfRanks, runGrouped, runQueries, workbenchRanker, type Metrics } from './evaluate.js';
import { groupedToolboxes, GROUPS } from './groups.js';
import { previousRanker } from './previous-ranker.js';
import { BLIND } from './blind.js';
import { BLIND2 } from './blind2.js';
import { QUERIES, type BenchQuery } from './queries.js';
import { TUNING2 } from './tuning2.js';
import { heldOutIds } from './split.js';

export const files = loadCorpus();
export const toolboxes = corpusEntries(files);
const heldOut = heldOutIds();
export const tuning = QUERIES.filter((q) => !heldOut.has(q.id));
export const held = QUERIES.filter((q) => heldOut.has(q.id));
export const toolCount = [...toolboxes.values()].reduce((n, e) => n + e.length, 0);

/**
 * Which queries a row is about: held out and blind are never tuned on (bench/search/blind.ts); tuning 2
 * (bench/search/tuning2.ts) is a second tuning set, written later from the corpus alone.
 */
export type QuerySet = 'held out' | 'blind' | 'blind 2' | 'tuning' | 'tuning 2';

/** The query sets a table shows: every one, or with `tuningOnly` the tuning queries alone. */
function querySets(tuningOnly: boolean): readonly (readonly [QuerySet, readonly BenchQuery[]])[] {
  return tuningOnly
    ? [['tuning', tuning], ['tuning 2', TUNING2]]
    : [['held out', held], ['blind', BLIND], ['blind 2', BLIND2], ['tuning', tuning], ['tuning 2', TUNING2]];
}

export const QUALITY_HEAD = ['Ranker', 'Queries', 'Scoped hit@1', 'Scoped hit@5', 'Scoped MRR', 'Global hit@1', 'Global hit@5', 'Global MRR'];

export interface QualityRow {
  ranker: string;
  queries: QuerySet;
  scoped: Metrics;
  global: Metrics;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
export const qualityCells = (r: QualityRow): string[] => [
  r.ranker,
  r.queries,
  ...[r.scoped, r.global].flatMap((m) => [pct(m.hit1), pct(m.hit5), m.mrr.toFixed(3)]),
];

/**
 * Every ranker's figures: the workbench, the workbench without its English word vectors, with the semantic ranker when
 * `SEARCH_EMBEDDINGS_URL` and `SEARCH_EMBEDDINGS_MODEL` name an endpoint, plain BM25, the ranking before issue 22 and
 * MiniSearch. `tuningOnly`: no held-out figure at all (for use while changing the ranking).
 */
export async function qualityRows(env: Record<string, string | undefined>, tuningOnly: boolean): Promise<QualityRow[]> {
  // Every query the rows below ask, so the semantic ranker has answered each (it answers from what it ranked first).
  const withEmbeddings = await embeddingsRanker(env, files, toolboxes, [...QUERIES, ...BLIND, ...BLIND2, ...TUNING2]);
  const withoutEnglish = workbenchRanker(files, { ...DEFAULT_PARAMS, englishWeight: 0, englishMeaningMin: Infinity }, 'workbench BM25F without the English vectors');
  const withoutDomain = workbenchRanker(files, { ...DEFAULT_PARAMS, meaningWeight: 0, serverMeaningWeight: 0, meaningMin: Infinity }, 'workbench BM25F without the domain vectors');
  const rankers = [workbenchRanker(files), withoutDomain, withoutEnglish, ...(withEmbeddings ? [withEmbeddings] : []), plainBm25, previousRanker, miniSearch] as unknown as Ranker<never>[];
  const sets = querySets(tuningOnly);
  const rows: QualityRow[] = [];
  for (const ranker of rankers) {
    for (const [queries, set] of sets) {
      const results = runQueries(ranker, toolboxes, set);
      rows.push({ ranker: ranker.name, queries, scoped: metricsOf(results, 'scoped'), global: metricsOf(results, 'global') });
    }
  }
  return rows;
}

export const GROUPED_HEAD = ['Ranker', 'Queries', 'Grouped hit@1', 'Grouped hit@5', 'Grouped MRR'];

export interface GroupedRow {
  ranker: string;
  queries: QuerySet;
  grouped: Metrics;
}

export const groupedCells = (r: GroupedRow): string[] => [r.ranker, r.queries, pct(r.grouped.hit1), pct(r.grouped.hit5), r.grouped.mrr.toFixed(3)];

/** How many servers and groups the grouped figures use (bench/search/groups.ts). */
export const groupCount = Object.keys(GROUPS).length;

/**
 * The workbench and plain BM25 when each query searches its server's group of servers (bench/search/groups.ts), as a
 * user's toolbox of several servers of one kind. `tuningOnly`: no held-out figure.
 */
export function groupedRows(tuningOnly: boolean): GroupedRow[] {
  const { groups, groupOf } = groupedToolboxes(toolboxes);
  const sets = querySets(tuningOnly);
  const rows: GroupedRow[] = [];
  for (const ranker of [workbenchRanker(files), plainBm25] as unknown as Ranker<never>[]) {
    for (const [queries, set] of sets) rows.push({ ranker: ranker.name, queries, grouped: metricsOfRanks(runGrouped(ranker, groups, groupOf, set)) });
  }
  return rows;
}

/** The tuning queries of both sets (never the held-out ones) the workbench does not rank first, scoped or global. */
export function missLines(): string[] {
  const lines: string[] = [];
  for (const r of runQueries(workbenchRanker(files), toolboxes, [...tuning, ...TUNING2])) {
    if (r.scoped !== 1 || r.global !== 1) {
      lines.push(`${r.query.id} "${r.query.query}" → ${r.query.server}:${r.query.tools.join('|')}  scoped ${r.scoped} [${r.scopedTop.join(', ')}]  global ${r.global} [${r.globalTop.join(', ')}]`);
    }
  }
  return lines;
}

export interface Speed {
  /** Medians (ms) of 30 builds of 1,000 tools: every text new, and texts unchanged. */
  build: number;
  rebuild: number;
  bridgesMs: number;
  /** Per-query times (ms): one toolbox of 1,000 tools, the same with both bridges, and every corpus toolbox. */
  one: number[];
  withBridges: number[];
  global: number[];
  toolboxes: number;
}

/** 1,000 tools: the corpus, topped up with copies of its tools under other server names. */
function thousandTools(): FullEntry[] {
  const thousand: FullEntry[] = [];
  const flat = [...toolboxes.values()].flat();
  for (let i = 0; thousand.length < 1000; i++) {
    const e = flat[i % flat.length]!;
    const server = i < flat.length ? e.source_server : `${e.source_server}-copy`;
    thousand.push({ ...e, source_server: server, toolbox_name: 'big', name: formatToolName('big', server, e.original_name) });
  }
  return thousand;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function measureSpeed(): Speed {
  const thousand = thousandTools();
  // Cold: every text new to the process (each round changes every description), stems memoised as in a running
  // workbench. Warm: the same texts in new entry objects, as when a catalog changes and most tools stay as they were.
  const builds: number[] = [];
  const rebuilds: number[] = [];
  for (let i = 0; i < 30; i++) {
    const fresh = thousand.map((e) => ({ ...e, description: `${e.description} (${i})` }));
    let t0 = performance.now();
    searchIndex(fresh);
    builds.push(performance.now() - t0);
    const again = fresh.map((e) => ({ ...e }));
    t0 = performance.now();
    searchIndex(again);
    rebuilds.push(performance.now() - t0);
  }
  const index = searchIndex(thousand);
  const perToolbox = [...toolboxes.values()].map((e) => searchIndex(e));
  const times = (run: (query: string) => unknown): number[] => {
    const out: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (const q of QUERIES) {
        const t0 = performance.now();
        run(q.query);
        out.push(performance.now() - t0);
      }
    }
    // The first round warms memos and the JIT.
    return out.slice(QUERIES.length);
  };
  // Both bridges built once from the 1,000 tools, as open_toolbox builds them once per catalog change, so a query word
  // no tool has pays for its English neighbours (remembered per word after the first round).
  shippedVectors('english');
  shippedVectors('domain');
  const bridgeStart = performance.now();
  const bridge = buildBridge([index]);
  const bridgesMs = performance.now() - bridgeStart;
  return {
    build: median(builds),
    rebuild: median(rebuilds),
    bridgesMs,
    one: times((q) => searchTools([index], q, 5)),
    withBridges: times((q) => searchTools([index], q, 5, { bridge })),
    global: times((q) => searchTools(perToolbox, q, 5)),
    toolboxes: perToolbox.length,
  };
}

export const SPEED_HEAD = ['Speed', 'p50', 'p99', 'Target'];

export const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!;

export function speedCells(s: Speed): string[][] {
  const ms = (x: number, digits = 3): string => `${x.toFixed(digits)} ms`;
  return [
    ['index build, 1,000 tools, every text new (median of 30)', ms(s.build, 1), '', '< 50 ms'],
    ['index rebuild, 1,000 tools, texts unchanged (after a catalog change; median of 30)', ms(s.rebuild, 1), '', ''],
    [`search, one toolbox of 1,000 tools (${s.one.length} queries)`, ms(quantile(s.one, 0.5)), ms(quantile(s.one, 0.99)), '< 2 ms p50'],
    ['bridges (vocabulary and English, vectors already read), 1,000 tools', ms(s.bridgesMs, 1), '', ''],
    [`search with both bridges, one toolbox of 1,000 tools (${s.withBridges.length} queries)`, ms(quantile(s.withBridges, 0.5)), ms(quantile(s.withBridges, 0.99)), '< 2 ms p50'],
    [`search, ${s.toolboxes} toolboxes, ${toolCount} tools (global)`, ms(quantile(s.global, 0.5)), ms(quantile(s.global, 0.99)), ''],
  ];
}

/**
 * `npm run bench:search`: search quality and speed over the frozen corpus (README: "Search"; BENCHMARKS.md).
 * Prints hit@1, hit@5 and MRR, scoped (the right toolbox) and global (every toolbox), for the tuning and held-out
 * queries separately, beside plain BM25, the ranking before issue 22 and MiniSearch; then index build time and search
 * latency over 1,000 tools. With `SEARCH_EMBEDDINGS_URL` and `SEARCH_EMBEDDINGS_MODEL` (and `SEARCH_EMBEDDINGS_API_KEY`)
 * naming an OpenAI-compatible endpoint, a row for the workbench with its semantic ranker as well. `--misses` lists
 * the tuning queries the workbench misses (never the held-out ones). `--tuning` prints the tuning rows alone (no
 * held-out figure), for use while changing the ranking; `--no-speed` leaves out the speed table.
 */
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { DEFAULT_PARAMS, searchIndex, searchTools } from '../../src/catalog/search.js';
import { formatToolName } from '../../src/catalog/names.js';
import { buildBridge } from '../../src/catalog/search-bridge.js';
import { miniSearch, plainBm25, type Ranker } from './baselines.js';
import { corpusEntries, loadCorpus } from './corpus.js';
import { metricsOf, runQueries, workbenchRanker, type Metrics } from './evaluate.js';
import { embeddingsRanker } from './embeddings.js';
import { previousRanker } from './previous-ranker.js';
import { QUERIES } from './queries.js';
import { heldOutIds } from './split.js';

const files = loadCorpus();
const toolboxes = corpusEntries(files);
const heldOut = heldOutIds();
const tuning = QUERIES.filter((q) => !heldOut.has(q.id));
const held = QUERIES.filter((q) => heldOut.has(q.id));
const toolCount = [...toolboxes.values()].reduce((n, e) => n + e.length, 0);

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const row = (m: Metrics): string => `${pct(m.hit1)} | ${pct(m.hit5)} | ${m.mrr.toFixed(3)}`;

console.log(`# Search benchmark\n\n${files.length} servers, ${toolCount} tools; ${QUERIES.length} queries (${tuning.length} tuning, ${held.length} held out).\n`);
console.log('| Ranker | Queries | Scoped hit@1 | Scoped hit@5 | Scoped MRR | Global hit@1 | Global hit@5 | Global MRR |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
// With SEARCH_EMBEDDINGS_URL and SEARCH_EMBEDDINGS_MODEL set, the semantic ranker's row too (the others do not change).
const withEmbeddings = await embeddingsRanker(process.env, files, toolboxes, QUERIES);
const withoutEnglish = workbenchRanker(files, { ...DEFAULT_PARAMS, englishWeight: 0 }, 'workbench BM25F without the English bridge');
const rankers: Ranker<never>[] = [workbenchRanker(files), withoutEnglish, ...(withEmbeddings ? [withEmbeddings] : []), plainBm25, previousRanker, miniSearch] as unknown as Ranker<never>[];
for (const ranker of rankers) {
  const sets = process.argv.includes('--tuning') ? ([['tuning', tuning]] as const) : ([['held out', held], ['tuning', tuning]] as const);
  for (const [label, set] of sets) {
    const results = runQueries(ranker, toolboxes, set);
    console.log(`| ${ranker.name} | ${label} | ${row(metricsOf(results, 'scoped'))} | ${row(metricsOf(results, 'global'))} |`);
  }
}

if (process.argv.includes('--misses')) {
  console.log('\nTuning queries the workbench misses at rank 1 (scoped / global rank, 0 = not in the first 20):');
  for (const r of runQueries(workbenchRanker(files), toolboxes, tuning)) {
    if (r.scoped !== 1 || r.global !== 1) {
      console.log(`  ${r.query.id} "${r.query.query}" → ${r.query.server}:${r.query.tools.join('|')}  scoped ${r.scoped} [${r.scopedTop.join(', ')}]  global ${r.global} [${r.globalTop.join(', ')}]`);
    }
  }
}

if (process.argv.includes('--no-speed')) process.exit(0);

// Speed: 1,000 tools (the corpus, topped up with copies of its tools under other server names).
const thousand: FullEntry[] = [];
const flat = [...toolboxes.values()].flat();
for (let i = 0; thousand.length < 1000; i++) {
  const e = flat[i % flat.length]!;
  const server = i < flat.length ? e.source_server : `${e.source_server}-copy`;
  thousand.push({ ...e, source_server: server, toolbox_name: 'big', name: formatToolName('big', server, e.original_name) });
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
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
const times = (indexes: typeof perToolbox): number[] => {
  const out: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const q of QUERIES) {
      const t0 = performance.now();
      searchTools(indexes, q.query, 5);
      out.push(performance.now() - t0);
    }
  }
  return out.slice(QUERIES.length);
};
// With both bridges (built once from the 1,000 tools, as open_toolbox builds them once per catalog change), so a query
// word no tool has pays for its English neighbours (remembered per word after the first round).
const bridgeStart = performance.now();
const bridge = buildBridge([index]);
const bridgeMs = performance.now() - bridgeStart;
const withBridges: number[] = [];
for (let round = 0; round < 5; round++) {
  for (const q of QUERIES) {
    const t0 = performance.now();
    searchTools([index], q.query, 5, { bridge });
    withBridges.push(performance.now() - t0);
  }
}
const one = times([index]);
const many = times(perToolbox);
const p = (xs: number[], q: number): string => `${([...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!).toFixed(3)} ms`;
console.log('\n| Speed | p50 | p99 | Target |');
console.log('| --- | --- | --- | --- |');
console.log(`| index build, 1,000 tools, every text new (median of ${builds.length}) | ${median(builds).toFixed(1)} ms | | < 50 ms |`);
console.log(`| index rebuild, 1,000 tools, texts unchanged (after a catalog change; median of ${rebuilds.length}) | ${median(rebuilds).toFixed(1)} ms | | |`);
console.log(`| search, one toolbox of 1,000 tools (${one.length} queries) | ${p(one, 0.5)} | ${p(one, 0.99)} | < 2 ms p50 |`);
console.log(`| bridges (vocabulary and English, vectors already read), 1,000 tools | ${bridgeMs.toFixed(1)} ms | | |`);
console.log(`| search with both bridges, one toolbox of 1,000 tools (${withBridges.length} queries) | ${p(withBridges, 0.5)} | ${p(withBridges, 0.99)} | < 2 ms p50 |`);
console.log(`| search, ${perToolbox.length} toolboxes, ${toolCount} tools (global) | ${p(many, 0.5)} | ${p(many, 0.99)} | |`);

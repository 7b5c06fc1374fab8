/**
 * `npm run bench:search`: search quality and speed over the frozen corpus (README: "Search"; `npm run bench` puts the
 * same tables in BENCHMARKS.md). Prints hit@1, hit@5 and MRR, scoped (the right toolbox) and global (every toolbox),
 * for the tuning, held-out and blind queries (bench/search/blind.ts) separately, beside plain BM25, the ranking before issue 22 and MiniSearch; the
 * same inside toolboxes that group several servers of one kind (bench/search/groups.ts); then
 * index build time and search latency over 1,000 tools. With `SEARCH_EMBEDDINGS_URL` and `SEARCH_EMBEDDINGS_MODEL` (and
 * `SEARCH_EMBEDDINGS_API_KEY`) naming an OpenAI-compatible endpoint, a row for the workbench with its semantic ranker
 * as well. `--misses` lists the tuning queries the workbench misses (never the held-out ones). `--tuning` prints the
 * tuning rows alone (no held-out figure), for use while changing the ranking; `--no-speed` leaves out the speed table.
 */
import { BLIND } from './blind.js';
import { BLIND2 } from './blind2.js';
import { QUERIES } from './queries.js';
import { TUNING2 } from './tuning2.js';
import { files, GROUPED_HEAD, groupCount, groupedCells, groupedRows, held, measureSpeed, missLines, QUALITY_HEAD, qualityCells, qualityRows, SPEED_HEAD, speedCells, toolCount, tuning } from './measure.js';

const table = (head: string[], rows: string[][]): string =>
  [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

// Speed first, in a heap that holds only what a workbench would (the rankers compared below hold indexes of their own).
const speed = process.argv.includes('--no-speed') ? undefined : measureSpeed();
console.log(`# Search benchmark\n\n${files.length} servers, ${toolCount} tools; ${QUERIES.length} queries (${tuning.length} tuning, ${held.length} held out), ${BLIND.length} + ${BLIND2.length} blind ones (two sets, written from the servers' descriptions only) and ${TUNING2.length} more tuning ones (tuning 2).\n`);
console.log(table(QUALITY_HEAD, (await qualityRows(process.env, process.argv.includes('--tuning'))).map(qualityCells)));
console.log(`\nGrouped: each query searches one toolbox of the servers of its kind (${groupCount} groups, bench/search/groups.ts).\n`);
console.log(table(GROUPED_HEAD, groupedRows(process.argv.includes('--tuning')).map(groupedCells)));

if (process.argv.includes('--misses')) {
  console.log('\nTuning queries the workbench misses at rank 1 (scoped / global rank, 0 = not in the first 20):');
  for (const line of missLines()) console.log(`  ${line}`);
}

if (speed) console.log(`\n${table(SPEED_HEAD, speedCells(speed))}`);

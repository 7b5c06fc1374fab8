import { readFileSync } from 'node:fs';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { target, type Section } from '../lib/report.js';
import { BLIND } from '../search/blind.js';
import { BLIND2 } from '../search/blind2.js';
import { TUNING2 } from '../search/tuning2.js';
import { files, GROUPED_HEAD, groupCount, groupedCells, groupedRows, held, measureSpeed, QUALITY_HEAD, qualityCells, qualityRows, quantile, SPEED_HEAD, speedCells, toolCount, tuning } from '../search/measure.js';

/** The quality targets for held-out queries: hit@5 and hit@1, inside the right toolbox and across all of them. */
const QUALITY_TARGETS = { scopedHit5: 0.93, globalHit5: 0.9, scopedHit1: 0.65, globalHit1: 0.6 };

/**
 * Search quality and speed (README "Search"), in process: the frozen corpus of real `tools/list` answers and the
 * benchmark queries of bench/search (the same measurements `npm run bench:search` prints). Quality targets are read on
 * the held-out queries only; the guard of `npm test` (held-out hit@5 within 2 points of bench/search/recorded.json) is
 * reported beside them.
 */
export async function searchPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Search');
  section.intro =
    `Corpus: the real \`tools/list\` of ${files.length} npm MCP servers, ${toolCount} tools (\`bench/search/corpus/\`). ` +
    `Queries: ${tuning.length + held.length}, written as people phrase a need before any tuning; ${held.length} held out ` +
    '(`bench/search/held-out.json`), never looked at while tuning; and ' +
    `${BLIND.length} + ${BLIND2.length} blind queries in two sets (\`bench/search/blind.ts\`, \`blind2.ts\`), written from each server's name and one-line description ` +
    'only, before its tools were read, and never tuned on; and ' +
    `${TUNING2.length} more tuning queries ("tuning 2", \`bench/search/tuning2.ts\`), written later from the corpus alone. ` +
    'Scoped: the query\'s own server\'s toolbox; global: every ' +
    "toolbox, with equivalent tools of other servers also counted. hit@k: a right tool among the first k; MRR over the " +
    'first 20. "plain BM25" is textbook BM25 (k1 1.2, b 0.75) over one bag of words with the same stems and stop words; ' +
    '"before issue 22" is the ranking the workbench had before; MiniSearch 7 gets the same fields, stems and a name ' +
    'boost; "without the domain vectors" ranks by words alone (no closeness in meaning, no top-up by it: the vectors learnt ' +
    'from other MCP packages\' text, scripts/build-domain-vectors.mjs); "without the English vectors" turns the general-English ' +
    'vectors off (the English bridge and their top-up). `npm run bench:search` prints the same ' +
    'tables (`--misses` lists the tuning queries missed). Grouped (second table): each query searches one toolbox ' +
    `holding every server of its kind (${groupCount} groups in \`bench/search/groups.ts\`, e.g. filesystem, memory and ` +
    'desktop-commander together), as users group servers; equivalent tools of the group count as right.';
  // Speed first, in a heap that holds only what a workbench would (the rankers compared hold indexes of their own).
  ctx.log('  speed: index builds and searches over 1,000 tools');
  const speed = measureSpeed();
  ctx.log('  quality: every ranker over the tuning, held-out and blind queries');
  const rows = await qualityRows({}, false);
  const grouped = groupedRows(false);
  section.tables.push(
    { head: QUALITY_HEAD, rows: rows.map(qualityCells) },
    { head: GROUPED_HEAD, rows: grouped.map(groupedCells) },
    { head: SPEED_HEAD, rows: speedCells(speed) },
  );

  const ours = rows.find((r) => r.ranker === 'workbench BM25F' && r.queries === 'held out')!;
  const plain = rows.find((r) => r.ranker === 'plain BM25' && r.queries === 'held out')!;
  const blind = rows.find((r) => r.ranker === 'workbench BM25F' && r.queries === 'blind')!;
  const blindPlain = rows.find((r) => r.ranker === 'plain BM25' && r.queries === 'blind')!;
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const recorded = JSON.parse(readFileSync(new URL('../search/recorded.json', import.meta.url), 'utf8')) as { heldOut: { scopedHit5: number; globalHit5: number } };
  section.targets.push(
    target('search index build, 1,000 tools, every text new (median of 30)', `${speed.build.toFixed(1)} ms`, '< 50 ms', speed.build < 50),
    target('search p50, one toolbox of 1,000 tools, both bridges', `${quantile(speed.withBridges, 0.5).toFixed(3)} ms`, '< 2 ms', quantile(speed.withBridges, 0.5) < 2),
    target('held-out hit@5 within 2 points of bench/search/recorded.json (scoped / global)', `${pct(ours.scoped.hit5)} / ${pct(ours.global.hit5)}`, `≥ ${recorded.heldOut.scopedHit5 - 2}% / ≥ ${recorded.heldOut.globalHit5 - 2}%`, ours.scoped.hit5 * 100 >= recorded.heldOut.scopedHit5 - 2 && ours.global.hit5 * 100 >= recorded.heldOut.globalHit5 - 2),
    target('held-out hit@5, scoped / global (the search issue\'s goal)', `${pct(ours.scoped.hit5)} / ${pct(ours.global.hit5)}`, `≥ ${pct(QUALITY_TARGETS.scopedHit5)} / ≥ ${pct(QUALITY_TARGETS.globalHit5)}`, ours.scoped.hit5 >= QUALITY_TARGETS.scopedHit5 && ours.global.hit5 >= QUALITY_TARGETS.globalHit5),
    target('held-out hit@1, scoped / global (the search issue\'s goal)', `${pct(ours.scoped.hit1)} / ${pct(ours.global.hit1)}`, `≥ ${pct(QUALITY_TARGETS.scopedHit1)} / ≥ ${pct(QUALITY_TARGETS.globalHit1)}`, ours.scoped.hit1 >= QUALITY_TARGETS.scopedHit1 && ours.global.hit1 >= QUALITY_TARGETS.globalHit1),
  );
  section.notes.push(
    `Held out, against plain BM25 in the same run: scoped hit@5 ${pct(ours.scoped.hit5)} vs ${pct(plain.scoped.hit5)}, hit@1 ${pct(ours.scoped.hit1)} vs ${pct(plain.scoped.hit1)}; ` +
      `global hit@5 ${pct(ours.global.hit5)} vs ${pct(plain.global.hit5)}, hit@1 ${pct(ours.global.hit1)} vs ${pct(plain.global.hit1)}.`,
    `Blind, against plain BM25 in the same run: scoped hit@5 ${pct(blind.scoped.hit5)} vs ${pct(blindPlain.scoped.hit5)}, hit@1 ${pct(blind.scoped.hit1)} vs ${pct(blindPlain.scoped.hit1)}; ` +
      `global hit@5 ${pct(blind.global.hit5)} vs ${pct(blindPlain.global.hit5)}, hit@1 ${pct(blind.global.hit1)} vs ${pct(blindPlain.global.hit1)}.`,
    'Across all toolboxes the goals are not met: most misses there are requests whose right tool the query finds inside its own toolbox but not among every server\'s, where tools of other servers share an incidental word ("what do you know about alice", "log a call with a customer"). ' +
      'The optional semantic ranker (README "Semantic ranker") is measured with SEARCH_EMBEDDINGS_URL and SEARCH_EMBEDDINGS_MODEL set for `npm run bench:search`.',
  );
  section.key = `held-out hit@5 ${pct(ours.scoped.hit5)} scoped, ${pct(ours.global.hit5)} global; build ${speed.build.toFixed(1)} ms`;
  return section;
}

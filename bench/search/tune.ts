/**
 * Tunes the ranking figures on the tuning queries only (never the held-out ones): coordinate search over each
 * figure in turn, keeping a change when it lifts the mean of scoped and global MRR plus hit@5. Prints the best set.
 *   node --import tsx bench/search/tune.ts [rounds]
 */
import { DEFAULT_PARAMS, FIELDS, type RankingParams } from '../../src/catalog/search.js';
import { corpusEntries, loadCorpus } from './corpus.js';
import { metricsOf, runQueries, workbenchRanker } from './evaluate.js';
import { QUERIES } from './queries.js';
import { heldOutIds } from './split.js';

const files = loadCorpus();
const toolboxes = corpusEntries(files);
const held = heldOutIds();
const tuning = QUERIES.filter((q) => !held.has(q.id));

function objective(params: RankingParams): number {
  const results = runQueries(workbenchRanker(files, params), toolboxes, tuning);
  const s = metricsOf(results, 'scoped');
  const g = metricsOf(results, 'global');
  return (s.mrr + g.mrr + s.hit5 + g.hit5) / 4;
}

type Knob = { get: (p: RankingParams) => number; set: (p: RankingParams, v: number) => RankingParams; steps: number[] };
const knobs: [string, Knob][] = [
  ...FIELDS.map((f): [string, Knob] => [`w.${f}`, { get: (p) => p.weights[f], set: (p, v) => ({ ...p, weights: { ...p.weights, [f]: v } }), steps: [0.5, 0.75, 1.5, 2] }]),
  ...FIELDS.map((f): [string, Knob] => [`b.${f}`, { get: (p) => p.b[f], set: (p, v) => ({ ...p, b: { ...p.b, [f]: v } }), steps: [0, 0.5, 1.5, 2] }]),
  ...(['k1', 'nameCoverage', 'prefixWeight', 'typoWeight', 'bridgeWeight', 'feedbackWeight'] as const).map((k): [string, Knob] => [
    k,
    { get: (p) => p[k], set: (p, v) => ({ ...p, [k]: v }), steps: [0.5, 0.75, 1.5, 2] },
  ]),
];

let best: RankingParams = JSON.parse(process.env.TUNE_FROM ?? JSON.stringify(DEFAULT_PARAMS)) as RankingParams;
let bestScore = objective(best);
console.log(`start ${bestScore.toFixed(4)}`);
const rounds = Number(process.argv[2] ?? 2);
for (let round = 0; round < rounds; round++) {
  for (const [name, knob] of knobs) {
    const current = knob.get(best);
    for (const step of knob.steps) {
      const value = name.startsWith('b.') ? Math.min(1, current === 0 ? step * 0.25 : current * step) : current === 0 ? step * 0.25 : current * step;
      const candidate = knob.set(best, Number(value.toFixed(3)));
      const score = objective(candidate);
      if (score > bestScore + 1e-9) {
        best = candidate;
        bestScore = score;
        console.log(`${name} ${current} → ${knob.get(best)}: ${score.toFixed(4)}`);
        break;
      }
    }
  }
}
console.log(JSON.stringify(best));

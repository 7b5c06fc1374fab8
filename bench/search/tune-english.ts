/**
 * Tunes the English bridge's figures (README "Search") on the tuning queries only, never the held-out ones: a grid
 * over the least cosine, the neighbours per word, their weight and which query words reach them. Prints each set's
 * objective (the mean of scoped and global MRR and hit@5, as tune.ts) and the best.
 *   node --import tsx bench/search/tune-english.ts
 */
import { DEFAULT_PARAMS } from '../../src/catalog/search.js';
import { DEFAULT_BRIDGE } from '../../src/catalog/search-bridge.js';
import { corpusEntries, loadCorpus } from './corpus.js';
import { metricsOf, runQueries, workbenchRanker } from './evaluate.js';
import { QUERIES } from './queries.js';
import { heldOutIds } from './split.js';

const files = loadCorpus();
const toolboxes = corpusEntries(files);
const held = heldOutIds();
const tuning = QUERIES.filter((q) => !held.has(q.id));

let best = { score: -1, label: '' };
const grid = (name: string, values: number[]): number[] => (process.env[name] ? process.env[name]!.split(',').map(Number) : values);
for (const minCosine of grid('COS', [0.45, 0.55, 0.65])) {
  for (const top of grid('TOP', [2, 4])) {
    for (const englishWeight of grid('WEIGHT', [0, 0.15, 0.3, 0.6])) {
      for (const englishMaxDf of grid('MAXDF', [0, 2])) {
        const params = { ...DEFAULT_PARAMS, englishWeight, englishMaxDf };
        const ranker = workbenchRanker(files, params, 'tuning', { ...DEFAULT_BRIDGE, english: { minCosine, top } });
        const results = runQueries(ranker, toolboxes, tuning);
        const s = metricsOf(results, 'scoped');
        const g = metricsOf(results, 'global');
        const score = (s.mrr + g.mrr + s.hit5 + g.hit5) / 4;
        const label = `cos ${minCosine} top ${top} weight ${englishWeight} maxDf ${englishMaxDf}`;
        console.log(`${label}: ${score.toFixed(4)} (scoped ${s.hit1.toFixed(3)}/${s.hit5.toFixed(3)}/${s.mrr.toFixed(3)}, global ${g.hit1.toFixed(3)}/${g.hit5.toFixed(3)}/${g.mrr.toFixed(3)})`);
        if (score > best.score + 1e-9) best = { score, label };
      }
    }
  }
}
console.log(`best: ${best.label} ${best.score.toFixed(4)}`);

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { corpusEntries, loadCorpus } from '../../bench/search/corpus.js';
import { metricsOf, runQueries, workbenchRanker } from '../../bench/search/evaluate.js';
import { QUERIES } from '../../bench/search/queries.js';
import { heldOutIds } from '../../bench/search/split.js';
import { GROUPS } from '../../bench/search/groups.js';
import { BLIND } from '../../bench/search/blind.js';
import { BLIND2 } from '../../bench/search/blind2.js';
import { TUNING2 } from '../../bench/search/tuning2.js';
import { SERVERS } from '../../bench/search/servers.js';

/**
 * The quality guard of search (README: "Search"; BENCHMARKS.md): on the held-out benchmark queries over the frozen
 * corpus, hit@5 may not fall more than 2 points below the figure recorded in bench/search/recorded.json. Quality
 * only: timings are measured by `npm run bench:search`, never asserted here.
 */
const recorded = JSON.parse(readFileSync(new URL('../../bench/search/recorded.json', import.meta.url), 'utf8')) as {
  heldOut: { scopedHit5: number; globalHit5: number };
};

describe('search benchmark (held-out queries)', () => {
  const files = loadCorpus();
  const held = heldOutIds();
  const results = runQueries(workbenchRanker(files), corpusEntries(files), QUERIES.filter((q) => held.has(q.id)));

  it('has the corpus and split it promises: ≥ 20 servers, ≥ 400 tools, ≥ 150 queries, a third held out', () => {
    assert.ok(files.length >= 20);
    assert.ok(files.reduce((n, f) => n + f.tools.length, 0) >= 400);
    assert.ok(QUERIES.length >= 150);
    assert.equal(held.size, Math.round(QUERIES.length / 3));
  });

  it('labels every query, tuning (both sets), held-out and blind, with tools the corpus has', () => {
    const names = new Map(files.map((f) => [f.server, new Set(f.tools.map((t) => t.name))]));
    for (const q of [...QUERIES, ...BLIND, ...BLIND2, ...TUNING2]) {
      assert.ok(q.tools.length > 0, `${q.id} has no right tool`);
      for (const tool of q.tools) assert.ok(names.get(q.server)?.has(tool), `${q.id} "${q.query}": ${q.server} has no tool ${tool}`);
      for (const other of q.also) {
        const [server, tool] = other.split(':');
        assert.ok(server !== q.server && names.get(server!)?.has(tool!), `${q.id} "${q.query}": no equivalent ${other}`);
      }
    }
    const all = [...QUERIES, ...BLIND, ...BLIND2, ...TUNING2];
    assert.equal(new Set(all.map((q) => q.id)).size, all.length, 'query ids are unique');
    const earlier = new Set([...QUERIES, ...BLIND, ...BLIND2].map((q) => q.query.toLowerCase()));
    assert.deepEqual(TUNING2.filter((q) => earlier.has(q.query.toLowerCase())).map((q) => q.query), [], 'no tuning-2 query repeats a query of another set');
  });

  it('puts every corpus server in exactly one group of the grouped figures', () => {
    const grouped = Object.values(GROUPS).flat();
    assert.equal(new Set(grouped).size, grouped.length, 'a server in two groups');
    assert.deepEqual([...grouped].sort(), files.map((f) => f.server).sort());
  });

  it('learns the domain word vectors from packages none of which is a benchmark server or a copy of one', () => {
    // scripts/build-domain-vectors.mjs also leaves out every sentence of the corpus; this checks the package list.
    const listed = readFileSync(new URL('../../scripts/domain-packages.txt', import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.trim().slice(0, l.trim().lastIndexOf('@')));
    assert.ok(listed.length >= 1_000, `${listed.length} packages`);
    const benchmark = new Set(SERVERS.map((s) => s.package));
    assert.equal(benchmark.size, files.length);
    assert.deepEqual(listed.filter((name) => benchmark.has(name)), []);
    // A copy under another scope or none (`@someone/mongodb-mcp-server`, `notion-mcp-server`): the same name after the
    // scope, when that name says more than "mcp" or "server" (`@hubspot/mcp-server` and `@stripe/mcp-server` differ).
    const unscoped = (name: string): string => name.slice(name.lastIndexOf('/') + 1);
    const telling = (name: string): boolean => name.split('-').some((w) => w !== 'mcp' && w !== 'server');
    const benchmarkNames = new Set([...benchmark].map(unscoped).filter(telling));
    assert.ok(benchmarkNames.has('mongodb-mcp-server') && !benchmarkNames.has('mcp-server'));
    assert.deepEqual(listed.filter((name) => benchmarkNames.has(unscoped(name))), []);
  });

  it('keeps held-out hit@5 within 2 points of the recorded figure, scoped and global', () => {
    const scoped = metricsOf(results, 'scoped').hit5 * 100;
    const global = metricsOf(results, 'global').hit5 * 100;
    assert.ok(scoped >= recorded.heldOut.scopedHit5 - 2, `scoped hit@5 ${scoped.toFixed(1)}% < recorded ${recorded.heldOut.scopedHit5}% − 2`);
    assert.ok(global >= recorded.heldOut.globalHit5 - 2, `global hit@5 ${global.toFixed(1)}% < recorded ${recorded.heldOut.globalHit5}% − 2`);
  });
});

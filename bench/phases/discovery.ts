import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callOk, textOf } from '../lib/mcp.js';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { servers, startWorkbench } from '../lib/processes.js';
import { target, type Section } from '../lib/report.js';
import { fourServers } from '../lib/servers-four.js';
import { fmtMs, fmtRatio, median, quantile, ratio } from '../lib/stats.js';
import { SEARCH_QUERIES, isExpected } from '../../test/fixtures/search-queries.js';

const BUDGET = 20_000;

interface Answer {
  detail: string;
  tools: { name?: string; source_server: string; original_name?: string }[];
  servers_connected: string[];
}

async function openText(client: Parameters<typeof callOk>[0], args: Record<string, unknown>): Promise<{ answer: Answer; chars: number }> {
  const result: CallToolResult = await callOk(client, 'open_toolbox', args);
  return { answer: result.structuredContent as unknown as Answer, chars: textOf(result).length };
}

/**
 * Progressive discovery (README "open_toolbox"): what open_toolbox costs in characters per toolbox (default answer
 * vs the whole catalog), how much faster a cached toolbox opens than a cold one, how long a search over 1,000 tools
 * takes, and how often search puts the expected tool first / in the top 5 on the query set the tests use.
 */
export async function discoveryPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Progressive discovery: budget, search, catalog cache');
  const { entries, cleanup } = await fourServers();
  const cacheRoot = await mkdtemp(join(tmpdir(), 'wb-bench-cache-'));
  try {
    // 1. Characters per toolbox.
    ctx.log('  open_toolbox characters per toolbox (default vs detail "full")');
    const toolboxes = {
      four: { description: 'four real servers', mcpServers: entries },
      catalog300: { description: '300 realistic tools', mcpServers: { fixture: servers.fixture('--catalog', '300') } },
      tools1000: { description: '1,000 small tools', mcpServers: { fixture: servers.fixture('--tools', '1000') } },
      catalog1000: { description: '1,000 realistic tools', mcpServers: { fixture: servers.fixture('--catalog', '1000') } },
    };
    const wb = await startWorkbench('workbench discovery', { toolboxes });
    const sizeRows: string[][] = [];
    let overBudget = 0;
    const searchMs: number[] = [];
    const detailMs: number[] = [];
    const hits = { at1: 0, at5: 0 };
    try {
      for (const name of Object.keys(toolboxes)) {
        const dflt = await openText(wb.client, { toolbox_name: name });
        const full = await openText(wb.client, { toolbox_name: name, detail: 'full' });
        if (dflt.chars > BUDGET) overBudget++;
        sizeRows.push([name, String(full.answer.tools.length), full.chars.toLocaleString('en-US'), `${dflt.chars.toLocaleString('en-US')} (${dflt.answer.detail})`, fmtRatio(ratio(full.chars, dflt.chars))]);
      }

      // 3. Search latency over 1,000 realistic tools, vs a detail request for one named tool (same round trip, no ranking).
      ctx.log('  search latency over 1,000 tools');
      const rounds = ctx.n(20, 3);
      for (let i = 0; i < rounds && performance.now() < ctx.deadline; i++) {
        for (const q of SEARCH_QUERIES) {
          const t0 = performance.now();
          await callOk(wb.client, 'open_toolbox', { toolbox_name: 'catalog1000', query: q.query });
          searchMs.push(performance.now() - t0);
        }
        const t1 = performance.now();
        await callOk(wb.client, 'open_toolbox', { toolbox_name: 'catalog1000', tools: ['create_issue'] });
        detailMs.push(performance.now() - t1);
      }
    } finally {
      await wb.close();
    }

    // 4. hit@1 / hit@5 on the query set, searching every toolbox (reference servers + 300-tool fixture), as the tests do.
    ctx.log('  search hit@1 / hit@5 on the query set');
    const data = await fourServers();
    const hitWb = await startWorkbench('workbench search quality', {
      toolboxes: {
        ref: { description: 'reference servers', mcpServers: { everything: data.entries.everything!, memory: data.entries.memory!, filesystem: data.entries.filesystem! } },
        big: { description: '300 realistic tools', mcpServers: { fixture: servers.fixture('--catalog', '300') } },
      },
    });
    const misses: string[] = [];
    try {
      for (const q of SEARCH_QUERIES) {
        const { answer } = await openText(hitWb.client, { query: q.query, limit: 5 });
        const rank = answer.tools.findIndex((t) => t.original_name !== undefined && isExpected(q, { source_server: t.source_server, original_name: t.original_name }));
        if (rank === 0) hits.at1++;
        if (rank >= 0 && rank < 5) hits.at5++;
        else misses.push(q.query);
      }
    } finally {
      await hitWb.close();
      await data.cleanup();
    }

    // 2. Cold vs cached open of the four real servers: each a fresh workbench; cached ones share a primed cache dir.
    ctx.log('  cold vs cached open_toolbox (4 real servers)');
    const config = { toolboxes: { dev: { description: 'four real servers', mcpServers: entries } } };
    const primed = join(cacheRoot, 'primed');
    const cold: number[] = [];
    const cached: number[] = [];
    const openOnce = async (cacheDir: string): Promise<number> => {
      const w = await startWorkbench('workbench open (cache)', config, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
      try {
        const t0 = performance.now();
        await callOk(w.client, 'open_toolbox', { toolbox_name: 'dev' });
        const ms = performance.now() - t0;
        // Let the background connect finish (and write the cache) before closing.
        await callOk(w.client, 'use_tool', { toolbox_name: 'dev', tool_name: 'dev__everything__echo', arguments: { message: 'x' } });
        return ms;
      } finally {
        await w.close();
      }
    };
    await openOnce(primed); // primes the cache (not counted)
    const reps = ctx.n(7, 2);
    for (let i = 0; i < reps && performance.now() < ctx.deadline; i++) {
      cold.push(await openOnce(join(cacheRoot, `cold-${i}`)));
      cached.push(await openOnce(primed));
    }

    const speedup = ratio(median(cold), median(cached));
    section.intro =
      `open_toolbox answers within a budget of ${BUDGET.toLocaleString('en-US')} characters by default (compact index when the catalog is larger); ` +
      'search is lexical and in-process; a toolbox whose servers\' catalogs are cached answers from the cache and connects in the background.';
    section.tables.push({
      head: ['Toolbox', 'Tools', 'Full catalog (chars)', 'Default answer (chars)', 'Full ÷ default'],
      rows: sizeRows,
    });
    section.tables.push({
      head: ['What', 'Median', 'p95', 'Note'],
      rows: [
        ['open_toolbox, 4 servers, cold (fresh workbench, empty cache)', fmtMs(median(cold)), fmtMs(quantile(cold, 0.95)), `${cold.length} runs`],
        ['open_toolbox, 4 servers, cached (fresh workbench)', fmtMs(median(cached)), fmtMs(quantile(cached, 0.95)), `${fmtRatio(speedup)} faster than cold`],
        ['search over 1,000 tools (query → top 5, round trip)', fmtMs(median(searchMs)), fmtMs(quantile(searchMs, 0.95)), `${searchMs.length} queries`],
        ['detail for one named tool of 1,000 (round trip, no ranking)', fmtMs(median(detailMs)), fmtMs(quantile(detailMs, 0.95)), `search costs ${fmtRatio(ratio(median(searchMs), median(detailMs)))} this`],
        ['search hit@1 / hit@5', `${hits.at1}/${SEARCH_QUERIES.length} / ${hits.at5}/${SEARCH_QUERIES.length}`, '', `${SEARCH_QUERIES.length} queries${misses.length ? `; missed: ${misses.join('; ')}` : ''}`],
      ],
    });
    section.targets.push(target('default open_toolbox answers over the budget', String(overBudget), '0', overBudget === 0));
    section.targets.push(target('cached open ÷ cold open speed-up', fmtRatio(speedup), '≥ 10×', speedup >= 10));
    section.key = `cached ${fmtRatio(speedup)} faster; search ${fmtMs(median(searchMs))}; hit@1 ${hits.at1}/${SEARCH_QUERIES.length}, hit@5 ${hits.at5}/${SEARCH_QUERIES.length}`;
  } finally {
    await cleanup();
    await rm(cacheRoot, { recursive: true, force: true });
  }
  return section;
}

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { directEraLatencies, httpEraLatencies, stdioEraLatencies, type ClientEra } from '../lib/era-latency.js';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { startWorkbench } from '../lib/processes.js';
import { target, type Section } from '../lib/report.js';
import { fmtMs, fmtRatio, median, quantile, ratio } from '../lib/stats.js';
import { node, paths } from '../../test/helpers/workbench-process.js';

const MODERN_SERVER = join(paths.fixture, '..', 'modern-server.mjs');

interface Kind {
  label: string;
  env: Record<string, string>;
}

/** The same fixture file as a modern-only server, and as a handshake-era (SDK v1) one. */
const KINDS: Kind[] = [
  { label: 'modern-only server (MCP 2026-07-28)', env: {} },
  { label: 'handshake-era server (SDK v1)', env: { MODERN_FIXTURE_AS_LEGACY: '1' } },
];

/** Starts a workbench on `cacheDir`, times its first use_tool (connect + call), and closes it. */
async function firstCall(kind: Kind, cacheDir: string, spawnLog: string): Promise<number> {
  const config = { toolboxes: { t: { mcpServers: { s: { command: node, args: [MODERN_SERVER], env: { ...kind.env, FIXTURE_SPAWN_LOG: spawnLog } } } } } };
  const wb = await startWorkbench('workbench eras', config, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
  try {
    const start = performance.now();
    const result = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 't', tool_name: 't__s__echo', arguments: { text: 'x' } } })) as CallToolResult;
    const ms = performance.now() - start;
    if (result.isError) throw new Error(`use_tool failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    return ms;
  } finally {
    await wb.close();
  }
}

async function events(spawnLog: string): Promise<{ spawns: number; probes: number }> {
  const lines = (await readFile(spawnLog, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event: string });
  return { spawns: lines.filter((l) => l.event === 'spawn').length, probes: lines.filter((l) => l.event === 'discover').length };
}

/**
 * A server's protocol era is probed once (server/discover on the process that will serve), then remembered in the
 * catalog cache: the first call of a fresh workbench with the era unknown vs remembered, and how many processes each
 * start spawned (never two per server).
 */
export async function erasPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Protocol eras: probe once, remember');
  // The first calls take what they need of the first 60% of the budget, so a loaded machine cannot leave the client
  // latencies (the ratio the target is about) with no time at all.
  const firstCallsDeadline = performance.now() + (ctx.deadline - performance.now()) * 0.6;
  const reps = ctx.n(7, 2);
  const { rows, spawnsPerStart } = await firstCalls(ctx, reps, firstCallsDeadline);
  const latency = await clientEraLatencies(ctx);
  const eraRatio = ratio(median(latency.stdio.modern), median(latency.stdio.legacy));
  const httpEraRatio = ratio(median(latency.http.modern), median(latency.http.legacy));
  const directRatio = ratio(median(latency.direct.modern), median(latency.direct.legacy));
  const row = (label: string, times: number[]): string[] => [label, fmtMs(median(times)), fmtMs(quantile(times, 0.99)), String(times.length)];
  section.tables.push({
    head: ['Client of the workbench', 'use_tool echo p50', 'p99', 'Calls'],
    rows: [
      row('SDK v2 client, handshake era (tool-call pipeline)', latency.stdio.legacy),
      row('SDK v2 client, MCP 2026-07-28 (tool-call pipeline)', latency.stdio.modern),
      ['modern ÷ handshake era', fmtRatio(eraRatio), '', ''],
      row('direct, no workbench: SDK v2 client, handshake era (canned answers)', latency.direct.legacy),
      row('direct, no workbench: SDK v2 client, MCP 2026-07-28 (canned answers)', latency.direct.modern),
      ['direct: modern ÷ handshake era (the SDK client\'s own share)', fmtRatio(directRatio), '', ''],
      row('over HTTP: SDK v2 client, handshake era (session)', latency.http.legacy),
      row('over HTTP: SDK v2 client, MCP 2026-07-28', latency.http.modern),
      ['over HTTP: modern ÷ handshake era', fmtRatio(httpEraRatio), '', ''],
    ],
  });
  section.intro =
    'Latencies: sequential `use_tool` → server-everything `echo` calls (300 warm-up calls, then ' +
    `${ctx.n(700, 100)} timed) of an SDK v2 client pinned to each era, ` +
    'each on a workbench of its own, in alternating blocks. The direct rows are the same client and calls against `lib/era-echo-server.mjs`, ' +
    'which answers with the bytes the workbench sends in each era and does no MCP work: what the modern client costs by itself. ' +
    'First `use_tool` of a fresh workbench (spawn, era, connect, call) for one server, with its era unknown (an empty catalog cache: ' +
    'the workbench probes with `server/discover` on the process that will serve) and remembered (the cache of an earlier run). ' +
    `The same fixture file serves as a modern-only server and, with MODERN_FIXTURE_AS_LEGACY=1, as a handshake-era SDK v1 server. Medians of up to ${reps} starts each (fewer when the time budget runs out); ` +
    'spawns and probes per start are counted by the server itself (FIXTURE_SPAWN_LOG).';
  section.tables.push({
    head: ['Server', 'First call, era unknown', 'First call, era remembered', 'Spawns per start (unknown / remembered)', 'Probes per start (unknown / remembered)'],
    rows,
  });
  section.notes.push(
    'Before the move to both eras the workbench sent `initialize` straight away, which is what "remembered" does for a handshake-era server; ' +
      'a modern-only server could not be reached at all (its answer to `initialize` is -32022).',
  );
  section.targets.push(target('server processes spawned per start and server, era unknown or remembered', String(spawnsPerStart), '1', spawnsPerStart === 1));
  section.key = `${rows.map((r) => `${r[0]}: unknown ${r[1]}, remembered ${r[2]}, spawns ${r[3]}`).join('; ')}; echo p50 modern client ÷ handshake-era client ${fmtRatio(eraRatio)} (stdio; direct, the client's own share: ${fmtRatio(directRatio)}), ${fmtRatio(httpEraRatio)} (HTTP)`;
  return section;
}

/** The first-call rows of both server kinds (fresh workbenches, era unknown and remembered), until `deadline`. */
async function firstCalls(ctx: PhaseContext, reps: number, deadline: number): Promise<{ rows: string[][]; spawnsPerStart: number }> {
  const rows: string[][] = [];
  let spawnsPerStart = 0;
  for (const kind of KINDS) {
    const unknown: number[] = [];
    const remembered: number[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'wb-bench-eras-'));
    try {
      const coldLog = join(dir, 'cold.log');
      const warmLog = join(dir, 'warm.log');
      const warmCache = join(dir, 'warm-cache');
      await firstCall(kind, warmCache, join(dir, 'seed.log')); // remembers the era (and the catalog) in warmCache
      let starts = 0;
      // One repetition at least, whatever the time: the spawn count needs a start of each kind.
      for (let rep = 0; rep < reps && (rep === 0 || performance.now() < deadline); rep++) {
        ctx.log(`  ${kind.label}: repetition ${rep + 1}/${reps}`);
        unknown.push(await firstCall(kind, join(dir, `cold-cache-${rep}`), coldLog));
        remembered.push(await firstCall(kind, warmCache, warmLog));
        starts++;
      }
      const cold = await events(coldLog);
      const warm = await events(warmLog);
      spawnsPerStart = Math.max(spawnsPerStart, cold.spawns / starts, warm.spawns / starts);
      rows.push([kind.label, fmtMs(median(unknown)), fmtMs(median(remembered)), `${cold.spawns / starts} / ${warm.spawns / starts}`, `${cold.probes / starts} / ${warm.probes / starts}`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { rows, spawnsPerStart };
}

type ByEra = Record<ClientEra, number[]>;

/**
 * Echo latencies of clients of both eras, in alternating blocks so that the machine's noise falls on both: through a
 * stdio workbench, directly against the canned-answer server (the client's own share), and through an HTTP workbench.
 */
async function clientEraLatencies(ctx: PhaseContext): Promise<{ stdio: ByEra; direct: ByEra; http: ByEra }> {
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-era-latency-'));
  const calls = ctx.n(700, 100);
  const measure = async (label: string, run: (era: ClientEra) => Promise<number[]>): Promise<ByEra> => {
    const byEra: ByEra = { legacy: [], modern: [] };
    for (let block = 0; block < ctx.n(3, 1) && (block === 0 || performance.now() < ctx.deadline); block++) {
      ctx.log(`  client eras, ${label}: block ${block + 1}`);
      for (const era of block % 2 === 0 ? (['legacy', 'modern'] as const) : (['modern', 'legacy'] as const)) byEra[era].push(...(await run(era)));
    }
    return byEra;
  };
  try {
    const stdio = await measure('stdio', (era) => stdioEraLatencies(era, calls, dir));
    const direct = await measure('direct', (era) => directEraLatencies(era, calls));
    const http = await measure('HTTP', (era) => httpEraLatencies(era, calls));
    return { stdio, direct, http };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

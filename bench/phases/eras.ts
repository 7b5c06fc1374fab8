import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { writeFile } from 'node:fs/promises';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { servers, startWorkbench } from '../lib/processes.js';
import { target, type Section } from '../lib/report.js';
import { fmtMs, fmtRatio, median, quantile, ratio } from '../lib/stats.js';
import { node, paths } from '../../test/helpers/workbench-process.js';
import { startHttpWorkbench } from '../../test/helpers/http-workbench.js';

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
 * Sequential `use_tool` → server-everything `echo` latencies of one SDK v2 client pinned to `era`, on a workbench of its
 * own over stdio (both eras' calls are taken by the tool-call pipeline; a modern client's first call, which introduces
 * its envelope, goes through the SDK's request handling).
 */
async function eraLatencies(era: 'legacy' | 'modern', calls: number, dir: string): Promise<number[]> {
  const configPath = join(dir, `config-${era}.json`);
  await writeFile(configPath, JSON.stringify({ toolboxes: { bench: { mcpServers: { srv: servers.everything() } } } }));
  const client = new ClientV2({ name: `bench-${era}`, version: '1' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
  const transport = new StdioV2({ command: node, args: [paths.cli, 'serve', '--config', configPath, '--no-catalog-cache'], stderr: 'ignore', cwd: dir });
  await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  try {
    return await timeEchoes(client, calls);
  } finally {
    await client.close();
  }
}

/** The same as {@link eraLatencies} over Streamable HTTP: one `serve --http` workbench, one SDK v2 client pinned to `era`. */
async function httpEraLatencies(era: 'legacy' | 'modern', calls: number): Promise<number[]> {
  const config = { toolboxes: { bench: { mcpServers: { srv: servers.everything() } } } };
  const wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0', '--no-catalog-cache']);
  const client = new ClientV2({ name: `bench-http-${era}`, version: '1' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
  try {
    await client.connect(new HttpV2(new URL(wb.url)), era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
    return await timeEchoes(client, calls);
  } finally {
    await client.close().catch(() => {});
    await wb.stop();
  }
}

/** 300 warm-up `use_tool` echo calls, then the times of `calls` more, one at a time. */
async function timeEchoes(client: ClientV2, calls: number): Promise<number[]> {
  const call = () => client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'bench', tool_name: 'bench__srv__echo', arguments: { message: 'x' } } });
  for (let i = 0; i < 300; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return times;
}

/**
 * A server's protocol era is probed once (server/discover on the process that will serve), then remembered in the
 * catalog cache: the first call of a fresh workbench with the era unknown vs remembered, and how many processes each
 * start spawned (never two per server).
 */
export async function erasPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Protocol eras: probe once, remember');
  const reps = ctx.n(7, 2);
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
      for (let rep = 0; rep < reps && performance.now() < ctx.deadline; rep++) {
        ctx.log(`  ${kind.label}: repetition ${rep + 1}/${reps}`);
        unknown.push(await firstCall(kind, join(dir, `cold-cache-${rep}`), coldLog));
        remembered.push(await firstCall(kind, warmCache, warmLog));
        starts++;
      }
      const cold = await events(coldLog);
      const warm = await events(warmLog);
      spawnsPerStart = Math.max(spawnsPerStart, cold.spawns / starts, warm.spawns / starts);
      rows.push([
        kind.label,
        fmtMs(median(unknown)),
        fmtMs(median(remembered)),
        `${cold.spawns / starts} / ${warm.spawns / starts}`,
        `${cold.probes / starts} / ${warm.probes / starts}`,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  // Clients of both eras on the same kind of workbench, measured in alternating blocks.
  const latencyDir = await mkdtemp(join(tmpdir(), 'wb-bench-era-latency-'));
  const byEra = { legacy: [] as number[], modern: [] as number[] };
  const byHttpEra = { legacy: [] as number[], modern: [] as number[] };
  try {
    for (let block = 0; block < ctx.n(3, 1) && performance.now() < ctx.deadline; block++) {
      ctx.log(`  client eras: block ${block + 1}`);
      for (const era of block % 2 === 0 ? (['legacy', 'modern'] as const) : (['modern', 'legacy'] as const)) {
        byEra[era].push(...(await eraLatencies(era, ctx.n(700, 100), latencyDir)));
      }
    }
    for (let block = 0; block < ctx.n(3, 1) && performance.now() < ctx.deadline; block++) {
      ctx.log(`  client eras over HTTP: block ${block + 1}`);
      for (const era of block % 2 === 0 ? (['legacy', 'modern'] as const) : (['modern', 'legacy'] as const)) {
        byHttpEra[era].push(...(await httpEraLatencies(era, ctx.n(700, 100))));
      }
    }
  } finally {
    await rm(latencyDir, { recursive: true, force: true });
  }
  const eraRatio = ratio(median(byEra.modern), median(byEra.legacy));
  const httpEraRatio = ratio(median(byHttpEra.modern), median(byHttpEra.legacy));
  section.tables.push({
    head: ['Client of the workbench', 'use_tool echo p50', 'p99', 'Calls'],
    rows: [
      ['SDK v2 client, handshake era (tool-call pipeline)', fmtMs(median(byEra.legacy)), fmtMs(quantile(byEra.legacy, 0.99)), String(byEra.legacy.length)],
      ['SDK v2 client, MCP 2026-07-28 (tool-call pipeline)', fmtMs(median(byEra.modern)), fmtMs(quantile(byEra.modern, 0.99)), String(byEra.modern.length)],
      ['modern ÷ handshake era', fmtRatio(eraRatio), '', ''],
      ['over HTTP: SDK v2 client, handshake era (session)', fmtMs(median(byHttpEra.legacy)), fmtMs(quantile(byHttpEra.legacy, 0.99)), String(byHttpEra.legacy.length)],
      ['over HTTP: SDK v2 client, MCP 2026-07-28', fmtMs(median(byHttpEra.modern)), fmtMs(quantile(byHttpEra.modern, 0.99)), String(byHttpEra.modern.length)],
      ['over HTTP: modern ÷ handshake era', fmtRatio(httpEraRatio), '', ''],
    ],
  });
  section.intro =
    'First `use_tool` of a fresh workbench (spawn, era, connect, call) for one server, with its era unknown (an empty catalog cache: ' +
    'the workbench probes with `server/discover` on the process that will serve) and remembered (the cache of an earlier run). ' +
    `The same fixture file serves as a modern-only server and, with MODERN_FIXTURE_AS_LEGACY=1, as a handshake-era SDK v1 server. Medians of ${reps} starts each; ` +
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
  section.key = `${rows.map((r) => `${r[0]}: unknown ${r[1]}, remembered ${r[2]}, spawns ${r[3]}`).join('; ')}; echo p50 modern client ÷ handshake-era client ${fmtRatio(eraRatio)} (stdio), ${fmtRatio(httpEraRatio)} (HTTP)`;
  return section;
}

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openDirectEra, openHttpEra, openStdioEra, type ClientEra, type EraSession } from '../lib/era-latency.js';
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
  // The first calls take what they need of the first 35% of the budget, so a loaded machine cannot leave the client
  // latencies (the ratios the targets are about) with too little time for their rounds.
  const firstCallsDeadline = performance.now() + (ctx.deadline - performance.now()) * 0.35;
  const reps = ctx.n(7, 2);
  const { rows, spawnsPerStart } = await firstCalls(ctx, reps, firstCallsDeadline);
  const plan: RoundPlan = { sets: ctx.n(3, 1), rounds: ctx.n(12, 2), calls: ctx.n(100, 20) };
  const latency = await clientEraLatencies(ctx, plan);
  const { eraRatio, httpEraRatio, directRatio } = reportLatencies(section, latency, plan);
  section.intro = intro(plan, reps);
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

/** The phase's description: what the latencies and first calls are, and how the ratio is made. */
function intro(plan: RoundPlan, reps: number): string {
  return (
    'Latencies: sequential `use_tool` → server-everything `echo` calls of an SDK v2 client pinned to each era, each on a workbench of its own ' +
    `(300 warm-up calls each). Both clients stay connected through a set of rounds; each round times a block of ${plan.calls} calls of one era, ` +
    'then of the other (the order alternating), and gives the ratio of the two blocks\' p50s, so the machine\'s noise in that stretch falls on both. ' +
    `Up to ${plan.sets} set(s) of fresh processes (where the scheduler places a process changes its speed) × ${plan.rounds} rounds; the figure is the median ` +
    'of the per-round ratios, with the middle half of them as its spread, and the ratio of the pooled p50s beside it. ' +
    'The direct rows are the same client and calls against `lib/era-echo-server.mjs`, ' +
    'which answers with the bytes the workbench sends in each era and does no MCP work: what the modern client costs by itself. ' +
    'First `use_tool` of a fresh workbench (spawn, era, connect, call) for one server, with its era unknown (an empty catalog cache: ' +
    'the workbench probes with `server/discover` on the process that will serve) and remembered (the cache of an earlier run). ' +
    `The same fixture file serves as a modern-only server and, with MODERN_FIXTURE_AS_LEGACY=1, as a handshake-era SDK v1 server. Medians of up to ${reps} starts each (fewer when the time budget runs out); ` +
    'spawns and probes per start are counted by the server itself (FIXTURE_SPAWN_LOG).');
}

/** The latency and ratio tables of the client latencies, and their targets; returns the three median ratios. */
function reportLatencies(
  section: Section,
  latency: { stdio: EraRounds; direct: EraRounds; http: EraRounds },
  plan: RoundPlan,
): { eraRatio: number; httpEraRatio: number; directRatio: number } {
  const row = (label: string, times: number[]): string[] => [label, fmtMs(median(times)), fmtMs(quantile(times, 0.99)), String(times.length)];
  section.tables.push({
    head: ['Client of the workbench', 'use_tool echo p50', 'p99', 'Calls'],
    rows: [
      row('SDK v2 client, handshake era (tool-call pipeline)', latency.stdio.legacy),
      row('SDK v2 client, MCP 2026-07-28 (tool-call pipeline)', latency.stdio.modern),
      row('direct, no workbench: SDK v2 client, handshake era (canned answers)', latency.direct.legacy),
      row('direct, no workbench: SDK v2 client, MCP 2026-07-28 (canned answers)', latency.direct.modern),
      row('over HTTP: SDK v2 client, handshake era (session)', latency.http.legacy),
      row('over HTTP: SDK v2 client, MCP 2026-07-28', latency.http.modern),
    ],
  });
  const ratioRow = (label: string, r: EraRounds): string[] => [
    label,
    fmtRatio(median(r.ratios)),
    `${fmtRatio(quantile(r.ratios, 0.25))} – ${fmtRatio(quantile(r.ratios, 0.75))}`,
    String(r.ratios.length),
    fmtRatio(ratio(median(r.modern), median(r.legacy))),
  ];
  section.tables.push({
    head: ['modern ÷ handshake era, echo p50', 'Median of rounds', 'Middle half of rounds', 'Rounds', 'Pooled p50s'],
    rows: [
      ratioRow('through the workbench, stdio', latency.stdio),
      ratioRow("direct, no workbench (the SDK client's own share)", latency.direct),
      ratioRow('through the workbench, HTTP', latency.http),
    ],
  });
  const eraRatio = median(latency.stdio.ratios);
  const httpEraRatio = median(latency.http.ratios);
  const directRatio = median(latency.direct.ratios);
  const share = `the SDK client's own share, direct: ${fmtRatio(directRatio)}`;
  const spread = (r: EraRounds): string => `middle half of ${r.ratios.length} round(s) ${fmtRatio(quantile(r.ratios, 0.25))} – ${fmtRatio(quantile(r.ratios, 0.75))}`;
  section.targets.push(
    target('modern ÷ handshake echo p50, stdio', `${fmtRatio(eraRatio)} (${spread(latency.stdio)}; ${share})`, '≤ 1.10×', eraRatio <= ERA_RATIO_LIMIT),
    target('modern ÷ handshake echo p50, HTTP', `${fmtRatio(httpEraRatio)} (${spread(latency.http)}; ${share} over stdio)`, '≤ 1.10×', httpEraRatio <= ERA_RATIO_LIMIT),
    target(
      "modern ÷ handshake echo p50 the workbench adds, stdio (through it ÷ the SDK client's own share)",
      `${fmtRatio(eraRatio / directRatio)} (${fmtRatio(eraRatio)} ÷ ${fmtRatio(directRatio)})`,
      '≤ 1.10×',
      eraRatio / directRatio <= ERA_RATIO_LIMIT,
    ),
  );
  return { eraRatio, httpEraRatio, directRatio };
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

/** How many sets of fresh processes, rounds per set, and calls per era and round the client latencies take. */
interface RoundPlan {
  sets: number;
  rounds: number;
  calls: number;
}

/** Both eras' latencies on one path (pooled over the rounds), and each round's modern ÷ handshake ratio of p50s. */
interface EraRounds {
  legacy: number[];
  modern: number[];
  ratios: number[];
}

/** The aim for the workbench: a modern client's echo p50 at most this much above a handshake-era one's. */
const ERA_RATIO_LIMIT = 1.1;

/**
 * Echo latencies of clients of both eras through a stdio workbench, directly against the canned-answer server (the
 * client's own share), and through an HTTP workbench, each path with its share of the phase's remaining time.
 */
async function clientEraLatencies(ctx: PhaseContext, plan: RoundPlan): Promise<{ stdio: EraRounds; direct: EraRounds; http: EraRounds }> {
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-era-latency-'));
  const start = performance.now();
  const left = Math.max(0, ctx.deadline - start);
  try {
    // HTTP calls take several times as long as stdio ones: it gets the largest share.
    const stdio = await alternate(ctx, 'stdio', (era) => openStdioEra(era, dir), plan, start + left * 0.3);
    const direct = await alternate(ctx, 'direct', openDirectEra, plan, start + left * 0.45);
    const http = await alternate(ctx, 'HTTP', openHttpEra, plan, ctx.deadline);
    return { stdio, direct, http };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Sets of two sessions (one client per era, fresh processes each set), timed in alternating blocks: each round times
 * one block of each era, in turn first, and records the ratio of their p50s. Stops starting sets and rounds at
 * `deadline`, after one round at least.
 */
async function alternate(ctx: PhaseContext, label: string, open: (era: ClientEra) => Promise<EraSession>, plan: RoundPlan, deadline: number): Promise<EraRounds> {
  const out: EraRounds = { legacy: [], modern: [], ratios: [] };
  for (let set = 0; set < plan.sets && (set === 0 || performance.now() < deadline); set++) {
    const sessions: Partial<Record<ClientEra, EraSession>> = {};
    try {
      sessions.legacy = await open('legacy');
      sessions.modern = await open('modern');
      for (let round = 0; round < plan.rounds && (out.ratios.length === 0 || performance.now() < deadline); round++) {
        ctx.log(`  client eras, ${label}: set ${set + 1}, round ${round + 1}`);
        const p50: Record<ClientEra, number> = { legacy: Number.NaN, modern: Number.NaN };
        for (const era of (set + round) % 2 === 0 ? (['legacy', 'modern'] as const) : (['modern', 'legacy'] as const)) {
          const times = await sessions[era]!.times(plan.calls);
          out[era].push(...times);
          p50[era] = median(times);
        }
        out.ratios.push(ratio(p50.modern, p50.legacy));
      }
    } finally {
      await Promise.allSettled([sessions.legacy?.close(), sessions.modern?.close()]);
    }
  }
  return out;
}

import { performance } from 'node:perf_hooks';
import { interleavedLatencies, latencies, throughput, type Call, type Throughput } from '../lib/load.js';
import { callOk, useTool } from '../lib/mcp.js';
import type { PhaseContext } from '../lib/phase.js';
import { PLACEMENTS, canPin, place, unpinAll, type Placement } from '../lib/placement.js';
import { NULL_PROXY, closeAll, cpuMs, servers, startDirect, startWorkbench, type ServerEntry } from '../lib/processes.js';
import { listDescendants } from '../../src/shared/process-tree.js';
import { emptySection } from '../lib/phase.js';
import { target, type Section } from '../lib/report.js';
import { fmtMs, fmtRate, fmtRatio, median, quantile, ratio } from '../lib/stats.js';


interface Plan {
  /** Fresh sets of processes; each is measured alike and the figures pooled (see compare). */
  sets: number;
  /** Also measure latency with each call path pinned (bench/lib/placement.ts). */
  pinned: boolean;
  warmup: number;
  /** Sequential calls per variant in each set. */
  latency: number;
  blocks: number;
  c1: { rounds: number; calls: number };
  c32: { rounds: number; calls: number };
}

type Variant = 'direct' | 'workbench' | 'lineProxy' | 'rewriteProxy';

interface Measured {
  latency: Record<Variant, number[]>;
  /** Workbench p50 ÷ direct p50 in each set of fresh processes. */
  setRatios: number[];
  /** Sequential latency with each call path pinned as the placement says (empty where processes cannot be pinned). */
  placed: Record<Placement, Record<Variant, number[]>>;
  c1: { direct: Throughput[]; workbench: Throughput[] };
  c32: Record<Variant, Throughput[]>;
  /** CPU ms and calls during the concurrency-32 rounds, summed over the sets. */
  cpu: { directServer: number; directCalls: number; viaServer: number; workbench: number; workbenchCalls: number };
  truncated: boolean;
}

/**
 * Starts the server directly, behind each floor proxy and behind a workbench, and measures them in alternating blocks:
 * sequential latency, throughput at concurrency 1 and 32, and the CPU each process spent per call at concurrency 32.
 * This is repeated on `plan.sets` fresh sets of processes and the samples pooled: how fast one process runs depends
 * on where the scheduler places it and what it shares a core with, which differs from one start to the next by as
 * much as the effect being measured (seen here: ±10% between two workbenches of the same build).
 */
async function compare(
  ctx: PhaseContext,
  entry: ServerEntry,
  tool: string,
  args: Record<string, unknown>,
  plan: Plan,
): Promise<Measured> {
  const m: Measured = {
    latency: { direct: [], workbench: [], lineProxy: [], rewriteProxy: [] },
    setRatios: [],
    placed: {
      'one core': { direct: [], workbench: [], lineProxy: [], rewriteProxy: [] },
      crossing: { direct: [], workbench: [], lineProxy: [], rewriteProxy: [] },
    },
    c1: { direct: [], workbench: [] },
    c32: { direct: [], workbench: [], lineProxy: [], rewriteProxy: [] },
    cpu: { directServer: 0, directCalls: 0, viaServer: 0, workbench: 0, workbenchCalls: 0 },
    truncated: false,
  };
  const canonical = `bench__srv__${tool}`;
  for (let set = 0; set < plan.sets && performance.now() < ctx.deadline; set++) {
    ctx.log(`  set ${set + 1} of ${plan.sets}: starting direct, line proxy, rewriting proxy and workbench`);
    const direct = await startDirect(`direct ${tool}`, entry);
    const lineProxy = await startDirect(`line proxy ${tool}`, { ...entry, command: process.execPath, args: [NULL_PROXY, entry.command, ...entry.args] });
    const rewriteProxy = await startDirect(`rewriting proxy ${tool}`, {
      ...entry,
      command: process.execPath,
      args: [NULL_PROXY, '--rewrite', entry.command, ...entry.args],
    });
    const wb = await startWorkbench(`workbench ${tool}`, { toolboxes: { bench: { mcpServers: { srv: entry } } } });
    await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
    const call: Record<Variant, Call> = {
      direct: () => callOk(direct.client, tool, args),
      workbench: () => useTool(wb.client, 'bench', canonical, args),
      lineProxy: () => callOk(lineProxy.client, tool, args),
      rewriteProxy: () => useTool(rewriteProxy.client, 'bench', canonical, args),
    };
    const [serverPid] = await wb.descendants();
    if (serverPid === undefined) throw new Error('the workbench has no downstream child after open_toolbox');

    for (const variant of Object.values(call)) {
      await latencies(variant, plan.warmup, ctx.deadline);
      await throughput(variant, plan.warmup, 32, ctx.deadline);
    }
    const lat = await interleavedLatencies(call, plan.latency, plan.blocks, ctx.deadline);
    for (const key of Object.keys(lat) as Variant[]) m.latency[key].push(...lat[key]);
    m.setRatios.push(ratio(median(lat.workbench), median(lat.direct)));

    if (plan.pinned && canPin()) {
      // The same sequential calls with each path pinned (see bench/lib/placement.ts), the bench process first.
      const chains: Record<Variant, number[]> = {
        direct: [process.pid, direct.pid],
        workbench: [process.pid, wb.pid, serverPid],
        lineProxy: [process.pid, lineProxy.pid, ...(await listDescendants(lineProxy.pid))],
        rewriteProxy: [process.pid, rewriteProxy.pid, ...(await listDescendants(rewriteProxy.pid))],
      };
      const perBlock = Math.ceil(plan.latency / plan.blocks);
      try {
        for (const placement of PLACEMENTS) {
          for (let b = 0; b < plan.blocks && performance.now() < ctx.deadline; b++) {
            for (const variant of Object.keys(call) as Variant[]) {
              place(chains[variant], placement, (set % 2) as 0 | 1);
              await latencies(call[variant], Math.min(100, perBlock), ctx.deadline); // settle after the move
              m.placed[placement][variant].push(...(await latencies(call[variant], perBlock, ctx.deadline)));
            }
          }
        }
      } finally {
        unpinAll(Object.values(chains).flat());
      }
    }

    for (let r = 0; r < plan.c1.rounds && performance.now() < ctx.deadline; r++) {
      m.c1.direct.push(await throughput(call.direct, plan.c1.calls, 1, ctx.deadline));
      m.c1.workbench.push(await throughput(call.workbench, plan.c1.calls, 1, ctx.deadline));
    }
    for (let r = 0; r < plan.c32.rounds && performance.now() < ctx.deadline; r++) {
      const d0 = cpuMs(direct.pid);
      const d = await throughput(call.direct, plan.c32.calls, 32, ctx.deadline);
      m.cpu.directServer += cpuMs(direct.pid) - d0;
      m.cpu.directCalls += d.calls;
      const s0 = cpuMs(serverPid);
      const w0 = cpuMs(wb.pid);
      const w = await throughput(call.workbench, plan.c32.calls, 32, ctx.deadline);
      m.cpu.viaServer += cpuMs(serverPid) - s0;
      m.cpu.workbench += cpuMs(wb.pid) - w0;
      m.cpu.workbenchCalls += w.calls;
      m.c32.direct.push(d);
      m.c32.workbench.push(w);
      m.c32.lineProxy.push(await throughput(call.lineProxy, plan.c32.calls, 32, ctx.deadline));
      m.c32.rewriteProxy.push(await throughput(call.rewriteProxy, plan.c32.calls, 32, ctx.deadline));
    }
    await closeAll();
  }
  m.truncated = performance.now() >= ctx.deadline;
  return m;
}

const medianRate = (list: Throughput[]): number => median(list.map((t) => t.perSecond));
const calls = (list: Throughput[]): number => list.reduce((a, t) => a + t.calls, 0);
const us = (ms: number): string => (Number.isFinite(ms) ? `${(ms * 1000).toFixed(0)} µs` : 'n/a');

function rows(m: Measured): string[][] {
  const p50d = median(m.latency.direct);
  const p50w = median(m.latency.workbench);
  const p99d = quantile(m.latency.direct, 0.99);
  const p99w = quantile(m.latency.workbench, 0.99);
  const floor = (label: string, variant: 'lineProxy' | 'rewriteProxy', what: string): string[][] => {
    const p50 = median(m.latency[variant]);
    const c32 = medianRate(m.c32[variant]);
    return [
      [`latency p50 via ${label}`, fmtMs(p50d), fmtMs(p50), fmtRatio(ratio(p50, p50d)), `${what}; workbench ÷ it: ${fmtRatio(ratio(p50w, p50))}`],
      [
        `throughput at concurrency 32 via ${label}`,
        fmtRate(medianRate(m.c32.direct)),
        fmtRate(c32),
        fmtRatio(ratio(c32, medianRate(m.c32.direct))),
        `workbench ÷ it: ${fmtRatio(ratio(medianRate(m.c32.workbench), c32))}`,
      ],
    ];
  };
  const setRatios = m.setRatios.map(fmtRatio).join(', ');
  return [
    [
      'latency p50',
      fmtMs(p50d),
      fmtMs(p50w),
      fmtRatio(ratio(p50w, p50d)),
      `${m.latency.direct.length} / ${m.latency.workbench.length} calls over ${m.setRatios.length === 1 ? 'one set' : `${m.setRatios.length} sets`} of fresh processes${m.setRatios.length > 1 ? ` (per set: ${setRatios})` : ''}`,
    ],
    ['latency p99', fmtMs(p99d), fmtMs(p99w), fmtRatio(ratio(p99w, p99d)), ''],
    [
      'throughput, concurrency 1',
      fmtRate(medianRate(m.c1.direct)),
      fmtRate(medianRate(m.c1.workbench)),
      fmtRatio(ratio(medianRate(m.c1.workbench), medianRate(m.c1.direct))),
      `median of ${m.c1.direct.length} rounds, ${calls(m.c1.direct)} / ${calls(m.c1.workbench)} calls`,
    ],
    [
      'throughput, concurrency 32',
      fmtRate(medianRate(m.c32.direct)),
      fmtRate(medianRate(m.c32.workbench)),
      fmtRatio(ratio(medianRate(m.c32.workbench), medianRate(m.c32.direct))),
      `median of ${m.c32.direct.length} rounds, ${calls(m.c32.direct)} / ${calls(m.c32.workbench)} calls`,
    ],
    [
      'CPU per call at concurrency 32',
      `server ${us(m.cpu.directServer / m.cpu.directCalls)}`,
      `server ${us(m.cpu.viaServer / m.cpu.workbenchCalls)} + workbench ${us(m.cpu.workbench / m.cpu.workbenchCalls)}`,
      '',
      'from /proc/<pid>/stat (10 ms ticks)',
    ],
    ...floor('a line-copying proxy', 'lineProxy', 'the extra process hop alone'),
    ...floor('a minimal rewriting proxy', 'rewriteProxy', 'hop + parse, rename, re-serialise: the floor for a proxy that renames tools'),
    ...PLACEMENTS.filter((p) => m.placed[p].direct.length > 0).map((placement) => {
      const p50 = (variant: Variant): number => median(m.placed[placement][variant]);
      return [
        `latency p50, ${placement === 'one core' ? 'every process on one core' : 'every hop crossing cores'}`,
        fmtMs(p50('direct')),
        fmtMs(p50('workbench')),
        fmtRatio(ratio(p50('workbench'), p50('direct'))),
        `pinned; line-copying proxy ${fmtRatio(ratio(p50('lineProxy'), p50('direct')))}, rewriting proxy ${fmtRatio(ratio(p50('rewriteProxy'), p50('direct')))}; ` +
          `workbench ÷ rewriting proxy ${fmtRatio(ratio(p50('workbench'), p50('rewriteProxy')))}; ${m.placed[placement].workbench.length} calls each`,
      ];
    }),
  ];
}

const HEAD = ['Metric', 'Direct', 'Through workbench', 'Workbench ÷ direct', 'Samples'];

/** The table, the two headline ratios, the truncation note and the one-line key, as both call phases report them. */
function report(section: Section, m: Measured, label: string): { p50: number; c32: number } {
  section.tables.push({ head: HEAD, rows: rows(m) });
  const p50 = ratio(median(m.latency.workbench), median(m.latency.direct));
  const c32 = ratio(medianRate(m.c32.workbench), medianRate(m.c32.direct));
  if (m.truncated) section.notes.push('The phase hit its time budget; loops were cut short (see sample counts).');
  section.key = `${label} p50 ${fmtMs(median(m.latency.direct))} → ${fmtMs(median(m.latency.workbench))} (${fmtRatio(p50)}), c32 ${fmtRate(medianRate(m.c32.direct))} → ${fmtRate(medianRate(m.c32.workbench))} (${fmtRatio(c32)})`;
  return { p50, c32 };
}

/** Call overhead: server-everything's echo through use_tool vs direct. */
export async function echoPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Call overhead: server-everything `echo`');
  const m = await compare(ctx, servers.everything(), 'echo', { message: 'hello, workbench' }, {
    sets: 3,
    pinned: true,
    warmup: ctx.n(500, 50),
    latency: ctx.n(700, 70),
    blocks: 4,
    c1: { rounds: 1, calls: ctx.n(1000, 100) },
    c32: { rounds: 1, calls: ctx.n(4000, 320) },
  });
  section.intro =
    '`use_tool {toolbox_name, tool_name: "bench__srv__echo", arguments: {message}}` through the workbench vs `tools/call echo` ' +
    'on the same server command started directly. Latency: sequential calls after a warm-up. Throughput: calls per second with 1 ' +
    'and 32 calls in flight. Everything is measured on 3 fresh sets of processes and pooled. The last four rows put two minimal ' +
    'proxies (bench/lib/null-proxy.mjs) in the same place: one that only copies lines between the pipes (the cost of the extra ' +
    'process hop itself on this machine) and one that also parses, renames and re-serialises every message, as any proxy that ' +
    'gives tools new names must. The last two rows repeat the latency with every call path pinned to known cores.';
  const { p50, c32 } = report(section, m, 'echo');
  const p50Of = (variant: Variant): number => median(m.latency[variant]);
  section.notes.push(
    `At p50 the line-copying proxy alone is ${fmtRatio(ratio(p50Of('lineProxy'), p50Of('direct')))} of direct and the minimal rewriting proxy ` +
      `${fmtRatio(ratio(p50Of('rewriteProxy'), p50Of('direct')))}; the workbench is ${fmtRatio(ratio(p50Of('workbench'), p50Of('rewriteProxy')))} ` +
      `of the rewriting proxy. Workbench ÷ direct per set of fresh processes: ${m.setRatios.map(fmtRatio).join(', ')}.`,
  );
  pinnedNote(section, m);
  section.targets.push(target('echo p50 latency, workbench ÷ direct', fmtRatio(p50), '≤ 2.2×', p50 <= 2.2));
  section.targets.push(target('echo throughput at concurrency 32, workbench ÷ direct', fmtRatio(c32), '≥ 0.5×', c32 >= 0.5));
  return section;
}

/** What the pinned rows mean, when there are any. */
function pinnedNote(section: Section, m: Measured): void {
  const one = m.placed['one core'];
  const crossing = m.placed.crossing;
  if (one.direct.length === 0 || crossing.direct.length === 0) {
    section.notes.push('No pinned rows: processes cannot be pinned here (needs Linux, util-linux `taskset` and 2 cores).');
    return;
  }
  section.notes.push(
    'Pinned rows: the same sequential calls with each call path pinned with `taskset` (bench/lib/placement.ts). On one core no ' +
      'wakeup crosses cores and latency is the CPU work of the path; with every hop crossing cores, each message wakes a process on ' +
      `the other core. A direct call takes ${fmtMs(median(one.direct))} on one core and ${fmtMs(median(crossing.direct))} across two. ` +
      'Unpinned, the scheduler sometimes keeps the direct client and server on one core and sometimes not, which the three ' +
      'processes of a proxied call cannot match, so the unpinned ratio partly measures that choice. The target is judged on the ' +
      'unpinned figure, as the target states it.',
  );
}

/** The same with a 1 MiB result: the fixture's `huge {bytes: 1048576}`. */
export async function bigResultPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Call overhead: 1 MiB result (fixture `huge`)');
  const bytes = 1024 * 1024;
  const m = await compare(ctx, servers.fixture(), 'huge', { bytes }, {
    sets: 1,
    pinned: false,
    warmup: ctx.n(20, 5),
    latency: ctx.n(200, 20),
    blocks: 4,
    c1: { rounds: 2, calls: ctx.n(50, 10) },
    c32: { rounds: 2, calls: ctx.n(128, 32) },
  });
  section.intro =
    'One text item of 1,048,576 characters per call (about 1 MiB of JSON on each stdio hop). Same method as above; no target in ' +
    'the bench beyond reporting it.';
  report(section, m, '1MiB');
  return section;
}
